"""elastman-monitor: runs the monitor worker."""
import sys

from elastman.cmd import workers
from elastman.common import config


@config.main_wrapper
def main(argv: list[str]) -> int:
    return workers.run(argv, ('monitor',))


if __name__ == '__main__':
    sys.exit(main())
