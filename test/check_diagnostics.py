"""Fails when a verifier diagnostic of an attnc dialect has no invalid.mlir case.

Used by test/diagnostics.test. For every emitOpError / emitError in
lib/Dialect/*/IR/*.cpp, the first string literal of the message (the fixed
part before any streamed value) must appear in an expected-error of
test/Dialect/<Name>/invalid.mlir.
"""
import pathlib
import re
import sys


def statement(text, start):
    """The source from `start` to the end of its statement (a `;` outside
    string literals), at most 300 characters."""
    in_string = False
    i = start
    while i < min(len(text), start + 300):
        c = text[i]
        if in_string and c == "\\":
            i += 2
            continue
        if c == '"':
            in_string = not in_string
        elif c == ";" and not in_string:
            break
        i += 1
    return text[start:i]


root = pathlib.Path(sys.argv[1])
missing, total = [], 0
for ir in sorted((root / "lib" / "Dialect").glob("*/IR")):
    invalid = root / "test" / "Dialect" / ir.parent.name / "invalid.mlir"
    expected = " ".join(re.findall(r"expected-error[^{]*\{\{(.*?)\}\}",
                                   invalid.read_text()))
    for src in sorted(ir.glob("*.cpp")):
        text = src.read_text()
        for m in re.finditer(r"emit(?:Op)?Error\s*\(", text):
            # The first literal after the call: in its parentheses or streamed,
            # within the statement. A call whose statement has none only hands
            # the diagnostic on (an emitError callback for getChecked).
            stmt = statement(text, m.end())
            lit = re.search(r'"((?:[^"\\]|\\.)*)"', stmt)
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
