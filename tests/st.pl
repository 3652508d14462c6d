#!/usr/bin/perl
# st.pl: writes a .safetensors file for the tests (no Python needed).
#   perl tests/st.pl OUT [--cut N] [--size N] [--header TEXT] TENSOR...
# TENSOR is NAME:DTYPE:D0,D1,...:SRC[:OFF[:ADD]] — the tensor's bytes are
# read from file SRC at byte offset OFF ("-" for zeros); ADD, for F32, is
# added to every element; ADD "bf16" keeps the high half of each f32 of SRC
# (a BF16 tensor), "bf16f32" the same values as F32.  --header replaces the JSON header, --size the
# 8-byte header size, --cut drops N bytes from the end.
use strict;
use warnings;

my %es = (F64 => 8, F32 => 4, F16 => 2, BF16 => 2, I64 => 8, I32 => 4, I16 => 2,
          I8 => 1, U8 => 1, BOOL => 1, U16 => 2, U32 => 4, U64 => 8);
my $out = shift @ARGV;
my ($cut, $size, $header) = (0, undef, undef);
my (@json, $data);
$data = '';
while (@ARGV) {
	my $a = shift @ARGV;
	if ($a eq '--cut') { $cut = shift @ARGV; next; }
	if ($a eq '--size') { $size = shift @ARGV; next; }
	if ($a eq '--header') { $header = shift @ARGV; next; }
	my ($name, $dt, $shape, $src, $off, $add) = split /:/, $a;
	my @dims = length $shape ? split(/,/, $shape) : ();
	my $n = 1;
	$n *= $_ for @dims;
	my $nb = $n * ($es{$dt} // 1);
	$nb *= 2 if defined $add && $add eq 'bf16';   # read as f32
	my $bytes = "\0" x $nb;
	if ($src ne '-') {
		open my $f, '<:raw', $src or die "$src: $!";
		seek $f, $off, 0;
		read($f, $bytes, $nb) == $nb or die "$src: short read";
		close $f;
	}
	if (defined $add && $add eq 'bf16') {   # f32 source: its high halves, as BF16
		$bytes = pack 'v*', map { $_ >> 16 } unpack 'V*', $bytes;
	} elsif (defined $add && $add eq 'bf16f32') {   # the same values as F32
		$bytes = pack 'V*', map { $_ & 0xffff0000 } unpack 'V*', $bytes;
	} elsif (defined $add) {
		my @v = unpack 'f<*', $bytes;
		$bytes = pack 'f<*', map { $_ + $add } @v;
	}
	my $b = length $data;
	$data .= $bytes;
	push @json, sprintf '"%s":{"dtype":"%s","shape":[%s],"data_offsets":[%d,%d]}', $name,
		$dt, join(',', @dims), $b, length $data;
}
$header //= '{"__metadata__":{"format":"pt"},' . join(',', @json) . '}';
$header .= ' ' x ((8 - length($header) % 8) % 8);
my $all = pack('Q<', $size // length $header) . $header . $data;
$all = substr $all, 0, length($all) - $cut if $cut;
open my $o, '>:raw', $out or die "$out: $!";
print $o $all;
close $o;
