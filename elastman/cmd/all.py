"""elastman-all: the API and every control worker in one process.

The embedded default: without a ``transport_url`` the workers talk over an
in-process transport and no broker is needed.
"""
import sys

from elastman.cmd import workers
from elastman.common import config


@config.main_wrapper
def main(argv: list[str]) -> int:
    return workers.run(argv, workers.CONTROL_WORKERS, with_api=True,
                       default_transport='fake://')


if __name__ == '__main__':
    sys.exit(main())
