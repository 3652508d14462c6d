#!/bin/sh
# runtime.t: the runtime library's unit tests (a C program speaking TAP).
exec ./bin/test-runtime
