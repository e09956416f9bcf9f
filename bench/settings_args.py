"""Command lines whose --setting values are kiln-compile flags."""


def joined_settings(argv):
    """`--setting --flag=value` as `--setting=--flag=value`: argparse takes a
    lone value that starts with a dash for an option of its own."""
    out, i = [], 0
    while i < len(argv):
        if argv[i] == "--setting" and i + 1 < len(argv):
            out.append("--setting=" + argv[i + 1])
            i += 2
        else:
            out.append(argv[i])
            i += 1
    return out
