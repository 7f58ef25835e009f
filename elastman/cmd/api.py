"""elastman-api: serves the REST API."""
import sys

from elastman.common import config
from elastman.cmd import workers


@config.main_wrapper
def main(argv: list[str]) -> int:
    return workers.run(argv, (), with_api=True)


if __name__ == '__main__':
    sys.exit(main())
