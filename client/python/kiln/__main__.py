"""python3 -m kiln: the kiln command-line tool."""
import sys

from kiln.cli import main

sys.exit(main())
