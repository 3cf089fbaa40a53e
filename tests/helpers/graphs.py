"""Import graphs (module name -> the names it imports or requires): their circles, for the layer tests
of Python (tests/unit/test_layers.py) and Lua (tests/unit/test_lua_layers.py)."""

from __future__ import annotations


def components(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan), in the order found.
    Edges to names outside ``graph`` are not followed."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in graph:
                continue
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: set[str] = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.add(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return found


def circle(graph: dict[str, set[str]], component: frozenset[str]) -> list[str]:
    """A path of imports from the component's first module (by name) back to itself."""
    start = min(component)
    paths = {start: [start]}
    todo = [start]
    while todo:
        node = todo.pop(0)
        for target in sorted(graph[node] & component):
            if target == start:
                return [*paths[node], start]
            if target not in paths:
                paths[target] = [*paths[node], target]
                todo.append(target)
    raise AssertionError(f"no circle through {start}")
