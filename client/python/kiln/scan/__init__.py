"""kiln.scan: Aesara's loops, aesara.scan and its short forms map, reduce, foldl and foldr."""
from kiln.scan.basic import OrderedUpdates, foldl, foldr, map, reduce, scan  # noqa: F401
from kiln.scan.utils import until  # noqa: F401
