#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Cut the files a kernel matrix guest printed on its console (tests/kernels/guest.sh) out of the
console log: `@@HPK FILE name@@`, base64 lines, `@@HPK END@@`.

Usage: console.py CONSOLE_LOG DIR
Writes each file into DIR and prints the guest's kernel release and machine. Exits 1, saying how far the
guest got, when it never reached its first capture or did not finish (`@@HPK DONE@@`).
"""
import base64
import binascii
import os
import re
import sys

KERNEL_RE = re.compile(r"@@HPK KERNEL (\S+) (\S+)@@")
FILE_RE = re.compile(r"@@HPK FILE ([A-Za-z0-9_.-]+)@@")


def split(text):
    """("release machine", {name: bytes}, done). Lines other than the markers and base64 are ignored."""
    release, files, done = None, {}, False
    name, chunks = None, []
    for line in text.replace("\r", "").split("\n"):
        m = KERNEL_RE.search(line)
        if m:
            release = m.group(1) + " " + m.group(2)
            continue
        m = FILE_RE.search(line)
        if m:
            name, chunks = m.group(1), []
            continue
        if "@@HPK END@@" in line and name:
            try:
                files[name] = base64.b64decode("".join(chunks), validate=True)
            except binascii.Error:
                files[name + ".corrupt"] = "".join(chunks).encode()
            name = None
            continue
        if "@@HPK DONE@@" in line:
            done = True
            continue
        if name is not None:
            chunks.append(line.strip())
    return release, files, done


def main(argv):
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0], encoding="utf-8", errors="replace") as f:
        text = f.read()
    release, files, done = split(text)
    if release is None:
        tail = [line for line in text.replace("\r", "").splitlines() if line.strip()][-3:]
        print("the guest never started its captures; the console ended with: %s"
              % " | ".join(tail), file=sys.stderr)
        return 1
    os.makedirs(argv[1], exist_ok=True)
    for name, data in files.items():
        with open(os.path.join(argv[1], name), "wb") as f:
            f.write(data)
    if not done:
        print("the guest (%s) stopped before it finished, after %d files (a crash or the "
              "timeout)" % (release, len(files)), file=sys.stderr)
        return 1
    print(release)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
