#!/bin/sh
# ucat.t: the runtime's Unicode data: categories, White_Space, case folding,
# lowercase and normalization on hand-picked cases (a C program speaking TAP).
exec ./bin/test-ucat
