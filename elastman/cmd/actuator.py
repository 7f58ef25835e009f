"""elastman-actuator: runs the actuator worker."""
import sys

from elastman.common import config
from elastman.cmd import workers


@config.main_wrapper
def main(argv: list[str]) -> int:
    return workers.run(argv, ('actuator',))


if __name__ == '__main__':
    sys.exit(main())
