#!/usr/bin/perl
# rmsovl.pl GPU.cu: in a generated .cu, every GEMV kernel that computes the
# RMS norm of its input a (mm.c) writes no result into the arena bytes of a,
# which it reads while it writes (gplan keeps a alive until then).  Prints
# "KERNELS OVERLAPS"; exit 0 when there are such kernels and no overlap.
local $/; my $c = <>; my ($bad, $n) = (0, 0);
my %r; while ($c =~ /\*v(\d+) = \([^)]*\)\(A \+ \d+\);\s*\/\* \S+, arena \[(\d+),(\d+)\)/g) { $r{$1} = [$2, $3]; }
while ($c =~ /\/\* a is the input of RMS norm %\d+, computed first in each warp \*\/\n(?:[^\n]*\n)*?DP_KERNEL void[^\n]*\n(k\w+)\(([^)]*)\)/g) {
	my ($k, $ps) = ($1, $2); my @p = split /,\s*/, $ps;
	my @out = grep { $p[$_] !~ /const/ } 0 .. $#p;
	$c =~ /DP_LAUNCH\($k, [^)]*\)\(([^;]*)\);/ or next;
	my @a = map { /v(\d+)/ ? $1 : -1 } split /,\s*/, $1;
	my $x = $r{$a[0]} or next; $n++;
	for (@out) { my $y = $r{$a[$_]} or next; $bad++ if $y->[0] < $x->[1] && $x->[0] < $y->[1]; }
}
print "$n $bad\n"; exit($n > 0 && $bad == 0 ? 0 : 1);
