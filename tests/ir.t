#!/bin/sh
# ir.t: the IR library's unit tests (a C program speaking TAP).
exec ./bin/test-ir
