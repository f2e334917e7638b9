"""The tables of text mutants (kernel.tsv, judge.tsv, k8s_status.tsv, realk8s.tsv) and their one rule of
application, shared by the runners that read them: a tab-separated row per mutant, '#' comment
lines, and '\\n' in a text column for a line break; a mutant's text must occur exactly once."""
import sys


def read_rows(path, columns, tool, text_columns=("from", "to")):
    """The rows of the table at path as dicts keyed by columns; exits naming tool, the file and
    the row when a row has another number of columns."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            cols = line.split("\t")
            if len(cols) != len(columns):
                sys.exit(f"{tool}: {path}: row '{cols[0]}' has {len(cols)} columns, want {len(columns)}")
            row = dict(zip(columns, cols))
            for c in text_columns:
                row[c] = row[c].replace("\\n", "\n")
            rows.append(row)
    return rows


def replace_once(text, old, new):
    """text with old replaced by new, or None when old is not in text exactly once."""
    return text.replace(old, new) if text.count(old) == 1 else None
