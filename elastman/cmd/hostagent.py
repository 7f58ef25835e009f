"""elastman-hostagent: runs the hostagent worker."""
import sys

from elastman.cmd import workers
from elastman.common import config


@config.main_wrapper
def main(argv: list[str]) -> int:
    return workers.run(argv, ('hostagent',))


if __name__ == '__main__':
    sys.exit(main())
