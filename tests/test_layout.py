"""The package's shape: modules a reader can hold in mind, no private names across modules, lines that fit a page."""
import ast, json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIB = ROOT / 'rag_lib'
MAX_MODULE_LINES, MAX_LINE, MAX_LONG_SHARE = 450, 120, 0.01


def modules():
    return sorted(p for p in LIB.rglob('*.py') if p.name != '_modidx.py')


def code_lines():
    "Every line of rag_lib/ and of the notebooks' code cells."
    for p in modules(): yield from p.read_text().splitlines()
    for nb in sorted((ROOT / 'nbs').rglob('*.ipynb')):
        for c in json.loads(nb.read_text())['cells']:
            if c['cell_type'] == 'code': yield from ''.join(c['source']).splitlines()


def test_modules_fit_in_mind():
    big = {str(p.relative_to(ROOT)): n for p in modules() if (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES}
    assert big == {}, f'modules over {MAX_MODULE_LINES} lines: {big}'


def test_lines_fit_the_page():
    lines = list(code_lines())
    long = sum(len(l) > MAX_LINE for l in lines)
    assert long / len(lines) < MAX_LONG_SHARE, f'{long} of {len(lines)} lines over {MAX_LINE} characters'


def _module_name(p: Path) -> str:
    parts = p.relative_to(ROOT).with_suffix('').parts
    return '.'.join(parts[:-1] if parts[-1] == '__init__' else parts)


def _imports(p: Path):
    "(module imported from, names) of every `from X import names` in `p`, relative imports resolved."
    pkg = _module_name(p).split('.')
    if p.name != '__init__.py': pkg = pkg[:-1]
    for node in ast.walk(ast.parse(p.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = pkg[:len(pkg) - node.level + 1] if node.level else []
            mod = '.'.join(base + (node.module.split('.') if node.module else []))
            yield mod, [a.name for a in node.names]


def test_no_private_names_across_modules():
    bad = [f'{_module_name(p)} imports {n} from {m}' for p in modules() for m, names in _imports(p)
           if m.startswith('rag_lib') for n in names if n.startswith('_') and not n.startswith('__')]
    assert bad == [], bad


def test_no_import_cycles():
    graph = {_module_name(p): {m for m, _ in _imports(p) if m.startswith('rag_lib') and m != _module_name(p)}
             for p in modules()}
    seen, stack, cycles = set(), [], []
    def visit(m):
        if m in stack: cycles.append(stack[stack.index(m):] + [m]); return
        if m in seen: return
        seen.add(m); stack.append(m)
        for d in sorted(graph.get(m, ())): visit(d)
        stack.pop()
    for m in sorted(graph): visit(m)
    assert cycles == [], cycles
