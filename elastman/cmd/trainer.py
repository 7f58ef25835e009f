"""elastman-trainer: runs the trainer worker."""
import sys

from elastman.common import config
from elastman.cmd import workers


@config.main_wrapper
def main(argv: list[str]) -> int:
    return workers.run(argv, ('trainer',))


if __name__ == '__main__':
    sys.exit(main())
