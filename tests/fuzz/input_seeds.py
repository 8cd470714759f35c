#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Seed corpora of the fuzz targets in tests/fuzz/fuzz_inputs.mk, into OUT/<target>/.

Each target gets the checked-in fixtures of its format where there are some, and a few inputs
written here byte by byte from the formats' specifications (protobuf wire format, gRPC framing,
the unwind cache's documented header), never from hostprof's own encoders:
    input_seeds.py OUT
"""
import base64
import gzip
import os
import shutil
import struct
import sys
import zlib

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "fixtures")


def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7F
        v >>= 7
        out.append(b | (0x80 if v else 0))
        if not v:
            return bytes(out)


def field_varint(num, v):
    return varint(num << 3) + varint(v)


def field_len(num, payload):
    return varint(num << 3 | 2) + varint(len(payload)) + payload


def write(out, target, name, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


def copy_fixtures(out, target, subdir, rename=None):
    src = os.path.join(FIXTURES, subdir)
    for root, _, files in os.walk(src):
        for fn in sorted(files):
            rel = os.path.relpath(os.path.join(root, fn), src)
            name = rename(rel) if rename else rel.replace(os.sep, "_")
            with open(os.path.join(root, fn), "rb") as f:
                write(out, target, name, f.read())


def rpc_status(code, message, retry=None):
    """google.rpc.Status {1: code, 2: message, 3: Any{1: type_url, 2: RetryInfo}}"""
    s = field_varint(1, code) + field_len(2, message.encode())
    if retry is not None:
        secs, nanos = retry
        duration = field_varint(1, secs) + field_varint(2, nanos)
        any_ = field_len(1, b"type.googleapis.com/google.rpc.RetryInfo") + field_len(
            2, field_len(1, duration)
        )
        s += field_len(3, any_)
    return s


def partial_success(rejected, message):
    """ExportProfilesServiceResponse {1: partial_success {1: rejected_profiles, 2: error_message}}"""
    return field_len(1, field_varint(1, rejected) + field_len(2, message.encode()))


def grpc_answer(http_index, http2, lines, body=b""):
    head = bytes([http_index, 1 if http2 else 0])
    return head + b"".join(l.encode() + b"\r\n" for l in lines) + b"\r\n" + body


def frame(msg, compressed=False):
    return bytes([1 if compressed else 0]) + struct.pack(">I", len(msg)) + msg


def unwind_cache_file(build_id, arch, rows):
    """The header documented in src/unwind/unwind_cache.h, then 16-byte rows."""
    row_bytes = b"".join(struct.pack("<IihhBBBB", *r) for r in rows)

    def header(crc):
        return (
            b"HPUNWTAB"
            + struct.pack("<IIIIQ", 1, arch, 16, len(build_id), len(rows))
            + build_id.ljust(64, b"\0")
            + struct.pack("<II", crc, 0)
        )

    crc = zlib.crc32(header(0) + row_bytes) & 0xFFFFFFFF
    return header(crc) + row_bytes


def main(out):
    copy_fixtures(out, "proc_maps", "maps")
    copy_fixtures(out, "cgroup", "cgroup")
    copy_fixtures(out, "ksyms", "kallsyms")
    copy_fixtures(out, "kubelet_pods", "kubelet")
    copy_fixtures(out, "docker_config", "docker", lambda rel: rel.split(os.sep)[1][:12] + ".json")

    write(out, "environ", "service", b"PATH=/usr/bin\0OTEL_SERVICE_NAME= shop \0HOME=/\0")
    write(out, "environ", "attributes",
          b"LANG=C\0OTEL_RESOURCE_ATTRIBUTES=deployment.environment=prod, service.name=my%20svc\0")
    write(out, "environ", "no-final-nul", b"OTEL_SERVICE_NAME=\0OTEL_SERVICE_NAME=x")

    write(out, "nspid", "container", "Name:\tbash\nUmask:\t0022\nState:\tS (sleeping)\n"
          "Tgid:\t4242\nNgid:\t0\nPid:\t4242\nPPid:\t1\nNStgid:\t4242\t7\nNSpid:\t4242\t7\n"
          "NSpgid:\t4242\t7\nNSsid:\t1\t1\n")
    write(out, "nspid", "host", "Name:\tsshd\nPid:\t1\nNSpid:\t1\n")
    write(out, "nspid", "old-kernel", "Name:\tinit\nPid:\t1\nPPid:\t0\n")

    write(out, "otlp_response", "json", b"\x01" + b'{"partialSuccess":{"rejectedProfiles":"3",'
          b'"errorMessage":"2 samples without a location"}}')
    write(out, "otlp_response", "json-snake", b"\x01" + b'{"partial_success":{"rejected_profiles"'
          b':1,"error_message":"caf\\u00e9"}}\n')
    write(out, "otlp_response", "json-empty", b"\x01{}")
    write(out, "otlp_response", "protobuf", b"\x00" + partial_success(3, "too many"))
    write(out, "otlp_response", "protobuf-empty", b"\x00")

    write(out, "rpc_status", "retry-info", rpc_status(8, "slow down", (2, 500000000)))
    write(out, "rpc_status", "plain", rpc_status(3, "bad profile"))
    write(out, "rpc_status", "base64", base64.b64encode(rpc_status(14, "busy", (1, 0))))
    write(out, "rpc_status", "retry-after-seconds", b"120")
    write(out, "rpc_status", "retry-after-date", b"Wed, 21 Oct 2015 07:28:00 GMT")

    ok = frame(partial_success(2, "2 rejected"))
    write(out, "grpc_answer", "ok", grpc_answer(0, True, [
        "HTTP/2 200", "content-type: application/grpc", "grpc-status: 0",
        "grpc-message: partial%20success"], ok))
    write(out, "grpc_answer", "ok-gzip", grpc_answer(0, True, [
        "HTTP/2 200", "content-type: application/grpc", "grpc-encoding: gzip",
        "grpc-status: 0"], frame(gzip.compress(partial_success(1, "x")), True)))
    details = base64.b64encode(rpc_status(8, "slow down", (3, 0))).decode().rstrip("=")
    write(out, "grpc_answer", "exhausted", grpc_answer(0, True, [
        "HTTP/2 200", "content-type: application/grpc", "grpc-status: 8",
        "grpc-message: slow%20down%E2%80%A6", "grpc-status-details-bin: " + details]))
    write(out, "grpc_answer", "proxy", grpc_answer(11, False, [
        "HTTP/1.1 503 Service Unavailable", "content-type: text/html"],
        b"<html><body>upstream busy</body></html>"))

    rows = [(0x1000, 8, 0, -8, 1, 0, 1, 0), (0x1004, 16, -16, -8, 1, 1, 1, 0),
            (0x1010, 16, -16, -8, 2, 1, 1, 0), (0x2000, 0, 0, 0, 4, 0, 2, 0)]
    table = unwind_cache_file(bytes(range(1, 21)), 1, rows)
    write(out, "unwind_cache", "x86_64", b"\x00" + table)
    write(out, "unwind_cache", "x86_64-fixed-up", b"\x01" + table)
    write(out, "unwind_cache", "arm64-empty",
          b"\x00" + unwind_cache_file(bytes(range(8)), 2, []))

    write(out, "otlp_headers", "both", b"api-key=s3cret, x-tenant=team%20a\0"
          b"Authorization=Bearer%20abc\0x-flag=1\nX-Tenant=b")
    write(out, "otlp_headers", "env-only", b"a=1,,b=%3D,c=\0")
    write(out, "otlp_headers", "broken", b"novalue,=x\0bad name=1")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: input_seeds.py OUT")
    main(sys.argv[1])
