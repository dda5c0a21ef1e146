"""Fails when a verifier diagnostic of an attnc dialect has no invalid.mlir case.

Used by test/diagnostics.test. For every emitOpError / emitError in
lib/Dialect/*/IR/*.cpp, the first string literal of the message (the fixed
part before any streamed value) must appear in an expected-error of
test/Dialect/<Name>/invalid.mlir.
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
missing, total = [], 0
for ir in sorted((root / "lib" / "Dialect").glob("*/IR")):
    invalid = root / "test" / "Dialect" / ir.parent.name / "invalid.mlir"
    expected = " ".join(re.findall(r"expected-error[^{]*\{\{(.*?)\}\}",
                                   invalid.read_text()))
    for src in sorted(ir.glob("*.cpp")):
        text = src.read_text()
        for m in re.finditer(r"emit(?:Op)?Error\s*\(", text):
            # The first literal after the call: in its parentheses or streamed.
            lit = re.search(r'"((?:[^"\\]|\\.)*)"', text[m.end():m.end() + 300])
            if not lit:
                continue
            total += 1
            frag = lit.group(1).replace("\\'", "'")
            # Literals split over lines are compared by their first words.
            probe = frag.strip()[:30]
            if probe and probe not in expected:
                line = text.count("\n", 0, m.start()) + 1
                missing.append(f"{src.relative_to(root)}:{line}: \"{frag}\"")
for m in missing:
    print("no expected-error case for", m)
print(f"{total - len(missing)}/{total} diagnostics have an invalid.mlir case")
sys.exit(1 if missing or total == 0 else 0)
