#!/usr/bin/env bash
# SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
# ns per RSVP message to sign and to verify with RFC 2747's INTEGRITY (HMAC-MD5), next to
# decoding the same Reserve unsigned (tests/bench/rsvp_integrity_bench.c). User space, no root.
set -euo pipefail
exec nice -n -20 "$O/tests/bench/rsvp_integrity_bench"
