"""Aesara's aesara.d3viz: a graph drawn in a standalone HTML page (no server: it opens from a
file:// URL) by the Kiln console's viewer, with pan, zoom, search, a node's props on a click,
in-place (red) and view (dashed blue) edges, and inner graphs that expand in place.
`kiln.d3viz(f, "graph.html")` is `kiln.d3viz.d3viz(f, "graph.html")`."""
import json
import os
import sys
import types

from kiln import printing
from kiln.graph import _core, core_variable

__all__ = ["d3viz", "d3write"]


def _viewer_dir():
    """The directory of the built viewer (viewer.js, viewer.css): $KILN_CONSOLE_DIR, the build's
    console/ beside kiln._core's build, or console/ inside an installed package."""
    core = os.path.dirname(os.path.abspath(_core.__file__))  # <build>/client/python/gen/kiln
    for d in (os.environ.get("KILN_CONSOLE_DIR"),
              os.path.join(core, "..", "..", "..", "..", "console"),
              os.path.join(os.path.dirname(os.path.abspath(__file__)), "console")):
        if d and os.path.exists(os.path.join(d, "viewer.js")):
            return os.path.abspath(d)
    raise RuntimeError("kiln.d3viz: the console's viewer (viewer.js) was not built: the build "
                       "makes it with npm into build/console (server/console/web), or set "
                       "KILN_CONSOLE_DIR")


def _graph_and_text(fct):
    """The graph's JSON (a compiled function's optimized graph as the server keeps it, else the
    variables' graph as built) and its debugprint text."""
    graph = printing._server_text(fct, "GRAPH_JSON")
    if graph is None:
        outs = list(fct) if isinstance(fct, (list, tuple)) else [fct]
        graph = _core.graph_json([core_variable(o) for o in printing._tensors(outs)])
    return json.loads(graph), printing.debugprint(fct, file="str")


def _inline(text):
    """Script or style text safe inside its element: no closing tag or comment opening."""
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def d3viz(fct, outfile, copy_deps=True, title=None):
    """Writes `outfile`, an HTML page drawing fct's graph: a compiled function (its optimized
    graph), a variable or a list of variables (their graph as built). The viewer's script and
    style are inlined, so the page needs no other file (`copy_deps` is accepted for Aesara's
    signature and has nothing to copy). Returns outfile."""
    graph, dprint = _graph_and_text(fct)
    viewer = _viewer_dir()
    with open(os.path.join(viewer, "viewer.js"), encoding="utf-8") as f:
        script = f.read()
    with open(os.path.join(viewer, "viewer.css"), encoding="utf-8") as f:
        style = f.read()
    title = title or getattr(fct, "name", None) or "Kiln graph"
    data = json.dumps({"title": title, "graph": graph, "dprint": dprint, "rewrites": []})
    page = ("<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>%s</title>\n"
            "<style>%s</style></head>\n<body><div id=\"kiln-viewer\"></div>\n"
            "<script id=\"kiln-graph\" type=\"application/json\">%s</script>\n"
            "<script>%s</script></body></html>\n"
            % (_html(title), _inline(style), data.replace("<", "\\u003c"), _inline(script)))
    directory = os.path.dirname(os.path.abspath(outfile))
    os.makedirs(directory, exist_ok=True)
    with open(outfile, "w", encoding="utf-8") as f:
        f.write(page)
    return outfile


def d3write(fct, path, *args, **kwargs):
    """Aesara's d3write: fct's graph as a Graphviz DOT file at `path`."""
    return printing.pydotprint(fct, outfile=path, format="dot", print_output_file=False)


def _html(text):
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace('"', "&quot;"))


class _CallableModule(types.ModuleType):
    """kiln.d3viz(...) calls d3viz, as the issue's users write it; kiln.d3viz.d3viz too."""

    def __call__(self, *args, **kwargs):
        return d3viz(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
