"""elastman-trainer: runs the trainer worker."""
import sys

from elastman.cmd import workers
from elastman.common import config


@config.main_wrapper
def main(argv: list[str]) -> int:
    return workers.run(argv, ('trainer',))


if __name__ == '__main__':
    sys.exit(main())
