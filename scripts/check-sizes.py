#!/usr/bin/env python3
"""The house's size rule: no source file under a crate's src/ over 800
lines and no function there over 80 (test files and items marked
#[cfg(test)] aside, wherever they sit in a file). Prints each one over and
exits 1 if there is any."""
import re, sys, subprocess, os

def code_of(line):
    """A line without its comment and its string and character contents."""
    code = re.sub(r'"(\\.|[^"\\])*"', '""', line)
    code = re.sub(r"'(\\.|[^'\\])'", "''", code)
    return re.sub(r'//.*', '', code)

def test_lines(lines):
    """Per line, whether it belongs to an item marked #[cfg(test)]: from the
    attribute to the item's closing brace, or to its ';' without a body."""
    marked = [False] * len(lines)
    i = 0
    while i < len(lines):
        if not re.match(r'^\s*#\[cfg\(test\)\]', lines[i]):
            i += 1
            continue
        depth = 0; started = False; j = i
        rest = code_of(lines[i]).split('#[cfg(test)]', 1)[1]
        while j < len(lines):
            code = rest if j == i else code_of(lines[j])
            done = False
            for ch in code:
                if ch == '{': depth += 1; started = True
                elif ch == '}':
                    depth -= 1
                    if started and depth == 0: done = True; break
                elif ch == ';' and depth == 0: done = True; break
            if done: break
            j += 1
        for k in range(i, min(j, len(lines) - 1) + 1):
            marked[k] = True
        i = j + 1
    return marked


def self_test():
    """The check's own test: a #[cfg(test)] item is skipped wherever it
    sits, and only it; braces in strings, characters and comments do not
    count."""
    lines = [
        '#[cfg(test)]',            # 0
        'mod tests;',              # 1
        'fn a() {',                # 2
        "    let c = '{';",        # 3
        '    let s = "}";  // }',  # 4
        '}',                       # 5
        '#[cfg(test)]',            # 6
        'mod inline {',            # 7
        '    fn t() { if x { } }', # 8
        '}',                       # 9
        'fn b() {}',               # 10
    ]
    got = [i for i, v in enumerate(test_lines(lines)) if v]
    assert got == [0, 1, 6, 7, 8, 9], got
    print("check-sizes: self-test passed")

if len(sys.argv) > 1 and sys.argv[1] == '--self-test':
    self_test()
    sys.exit(0)
root = sys.argv[1] if len(sys.argv) > 1 else '.'
found = []
files = subprocess.run(['git','-C',root,'ls-files','*.rs'],capture_output=True,text=True).stdout.split()
files = [f for f in files if re.match(r'^(ktrace-[a-z]+|examples|fuzz)/src/', f)]
fnre = re.compile(r'^\s*(pub(\([^)]*\))?\s+)?(const\s+)?(async\s+)?(unsafe\s+)?(extern\s+"C"\s+)?fn\s+(\w+)')
for f in files:
    lines = open(os.path.join(root,f)).read().split('\n')
    is_test_file = f.endswith('tests.rs') or '/tests/' in f
    if len(lines) > 800 and not is_test_file:
        found.append(f"file {f}: {len(lines)} lines (at most 800)")
    # The lines of every item marked #[cfg(test)] (a test module wherever
    # it sits, a test-only use or function): skipped, and only they.
    in_test = test_lines(lines)
    i = 0
    while i < len(lines):
        m = fnre.match(lines[i])
        if m and not in_test[i] and not is_test_file:
            # find opening brace
            depth = 0; started = False; j = i
            while j < len(lines):
                code = code_of(lines[j])
                for ch in code:
                    if ch == '{': depth += 1; started = True
                    elif ch == '}': depth -= 1
                if started and depth == 0: break
                if not started and code.rstrip().endswith(';'): break
                j += 1
            n = j - i + 1
            if started and n > 80:
                found.append(f"function {m.group(7)} at {f}:{i+1}: {n} lines (at most 80)")
        i += 1
for line in found:
    print(line)
sys.exit(1 if found else 0)
