#!/usr/bin/perl
# kernfuzz.pl SEED DIR: a random program of elementwise and shape ops for
# tests/kernfuzz.t, which builds it for the cpu and for cuda (the fused
# kernels of dp-lower_gpu, emulated on the host) and compares the two.
# Writes DIR/k.ir (text IR), DIR/NAME.npy for each input, DIR/args (the
# --in and --out arguments) and DIR/outs (the output names).  The same seed
# gives the same files.
#
# The ops are those whose index arithmetic the fused kernels compose:
# slices (negative bounds, steps of 2), selects, permutes, views, expands,
# cats, gathers along a dim (aten.index), unary and binary elementwise ops,
# comparisons and where, with values read at several indices of one
# kernel: a slice's halves swapped and concatenated (rotate_half), a value
# times its own rotation, broadcasts of one row of a value against it; and
# one-row products (the GEMV kernel) whose results such kernels read (a
# GEMV's tail, computed by its blocks where each element reads one block's
# columns).
use strict;
use warnings;

my ($seed, $dir) = @ARGV;
die "usage: kernfuzz.pl SEED DIR\n" unless defined $dir && $seed =~ /^\d+$/;

my $st = ($seed * 40503 + 12345) % 2147483648;
sub rnd {    # 0..n-1: a 31-bit LCG's high bits (its products fit Perl's 64-bit integers)
	my ($n) = @_;
	$st = ($st * 1103515245 + 12345) % 2147483648;
	return int($st / 65536) % $n;
}
sub pick { return $_[rnd(scalar @_)] }

my (@ir, @vals, @args, @ins);
my $nv = 0;
sub tystr { my ($dt, $s) = @_; return "$dt\[" . join(',', @$s) . "]" }
sub numel { my $n = 1; $n *= $_ for @{$_[0]}; return $n }
sub emit {    # op text, result shape, dtype: the new value's id
	my ($op, $shape, $dt) = @_;
	my $id = $nv++;
	push @ir, "%$id = $op : " . tystr($dt // 'f32', $shape) . " \@cpu";
	push @vals, { id => $id, shape => [@$shape] } if ($dt // 'f32') eq 'f32';
	return $id;
}
sub npy {    # file, dtype ('<f4' or '<i8'), shape, values
	my ($f, $descr, $shape, @v) = @_;
	my $sh = '(' . join(', ', @$shape) . (@$shape == 1 ? ',' : '') . ')';
	my $d = "{'descr': '$descr', 'fortran_order': False, 'shape': $sh, }";
	$d .= ' ' x (117 - length $d) . "\n";
	open my $o, '>:raw', $f or die "$f: $!";
	print $o "\x93NUMPY\x01\x00", pack('v', 118), $d,
	    $descr eq '<f4' ? pack('f<*', @v) : pack('q<*', @v);
	close $o;
}
sub input {
	my ($shape) = @_;
	my $name = 'x' . scalar @ins;
	my $id = emit("input {name=\"$name\"}", $shape);
	npy("$dir/$name.npy", '<f4', $shape, map { (rnd(2001) - 1000) / 400 } 1 .. numel($shape));
	push @ins, $name;
	return $id;
}
sub randshape {
	my $r = 1 + rnd(4);
	return [map { 1 + rnd(6) } 1 .. $r];
}
sub val { return pick(@vals) }

# slice bounds of dim n giving at least one element: (start, end, step, size)
sub bounds {
	my ($n) = @_;
	for (;;) {
		my $s = rnd(2) ? rnd($n) : -1 - rnd($n);
		my $e = pick($n, -rnd($n), 1 + rnd($n), 9223372036854775807);
		my $k = 1 + rnd(2);
		my $a = $s < 0 ? ($s + $n < 0 ? 0 : $s + $n) : ($s > $n ? $n : $s);
		my $b = $e < 0 ? ($e + $n < 0 ? 0 : $e + $n) : ($e > $n ? $n : $e);
		next if $b <= $a;
		return ($s, $e, $k, int(($b - $a + $k - 1) / $k));
	}
}

my $una = sub {
	my ($v) = @_;
	my $f = pick(qw(neg tanh sin abs sigmoid));
	return emit("aten.$f %$v->{id}", $v->{shape});
};
my %gen;
%gen = (
	unary => sub { $una->(val()) },
	binary => sub {    # with a value of its shape (itself, read twice, if none)
		my $a = val();
		my @same = grep { "@{$_->{shape}}" eq "@{$a->{shape}}" } @vals;
		my $b = pick(@same);
		my $f = pick(qw(add mul sub));
		return emit("aten.$f %$a->{id}, %$b->{id}" . ($f eq 'mul' ? '' : ' {alpha=1.0}'),
		    $a->{shape});
	},
	rowcast => sub {    # a value against one of its own rows along some dims
		my $a = val();
		my @s = @{$a->{shape}};
		my $b = $a->{id};
		for my $d (0 .. $#s) {
			next if $s[$d] == 1 || rnd(2);
			my $i = rnd($s[$d]);
			my @t = @s;
			$t[$d] = 1;
			$b = emit("aten.slice %$b {dim=$d, start=$i, end=" . ($i + 1) . ", step=1}", [@t]);
			@s = @t;
		}
		return emit("aten.mul %$a->{id}, %$b", $a->{shape});
	},
	permute => sub {
		my $a = $_[0] // val();
		my @p = 0 .. $#{$a->{shape}};
		for my $i (reverse 1 .. $#p) { my $j = rnd($i + 1); @p[$i, $j] = @p[$j, $i] }
		return emit("aten.permute %$a->{id} {dims=[" . join(', ', @p) . "]}",
		    [map { $a->{shape}[$_] } @p]);
	},
	view => sub {    # another factorization of its element count
		my $a = val();
		my $n = numel($a->{shape});
		my @s;
		while ($n > 1 && @s < 3) {
			my @f = grep { $n % $_ == 0 } 1 .. $n;
			my $f = pick(@f);
			push @s, $f;
			$n /= $f;
		}
		push @s, $n;
		return emit("aten.view %$a->{id} {size=[" . join(', ', @s) . "]}", [@s]);
	},
	slice => sub {
		my $a = $_[0] // val();
		my @s = @{$a->{shape}};
		my $d = rnd(scalar @s);
		my ($b, $e, $k, $m) = bounds($s[$d]);
		$s[$d] = $m;
		return emit("aten.slice %$a->{id} {dim=$d, start=$b, end=$e, step=$k}", [@s]);
	},
	select => sub {
		my $a = val();
		my @s = @{$a->{shape}};
		return $gen{slice}->() if @s < 2;
		my $d = rnd(scalar @s);
		my $i = rnd(2) ? rnd($s[$d]) : -1 - rnd($s[$d]);
		splice @s, $d, 1;
		return emit("aten.select %$a->{id} {dim=$d, index=$i}", [@s]);
	},
	rotate => sub {    # cat(f(x[k:]), x[:k]) along d, times x: x read at three indices
		my $a = $_[0] // val();
		my @s = @{$a->{shape}};
		my @d = grep { $s[$_] >= 2 } 0 .. $#s;
		return $una->($a) unless @d;   # no axis to rotate
		my $d = pick(@d);
		my $k = 1 + rnd($s[$d] - 1);
		my (@p, @q) = ();
		@p = @s;
		$p[$d] = $k;
		@q = @s;
		$q[$d] = $s[$d] - $k;
		my $lo = emit("aten.slice %$a->{id} {dim=$d, start=0, end=$k, step=1}", [@p]);
		my $hi = emit("aten.slice %$a->{id} {dim=$d, start=$k, end=9223372036854775807, step=1}",
		    [@q]);
		my $f = $una->({ id => $hi, shape => [@q] });
		my $r = emit("aten.cat %$f, %$lo {dim=" . ($d - scalar @s) . "}", [@s]);
		return $r unless $_[1] || rnd(2);
		# x read first (as q·cos + rotate_half(q)·sin reads q) or last
		return emit($_[1] || rnd(2) ? "aten.mul %$a->{id}, %$r" : "aten.mul %$r, %$a->{id}", [@s]);
	},
	double => sub {    # cat(x, f(x)) along d
		my $a = val();
		my @s = @{$a->{shape}};
		my $d = rnd(scalar @s);
		my $f = $una->($a);
		my @t = @s;
		$t[$d] *= 2;
		return emit("aten.cat %$a->{id}, %$f {dim=$d}", [@t]);
	},
	expand => sub {
		my $a = val();
		my @s = @{$a->{shape}};
		my @one = grep { $s[$_] == 1 } 0 .. $#s;
		return $gen{rowcast}->() unless @one;
		my @t = @s;
		$t[$_] = 2 + rnd(3) for @one;
		unshift @t, 2 if @t < 4 && rnd(2);
		return emit("aten.expand %$a->{id} {size=[" . join(', ', @t) . "]}", [@t]);
	},
	where => sub {
		my $a = val();
		my @same = grep { "@{$_->{shape}}" eq "@{$a->{shape}}" && $_ != $a } @vals;
		my $b = @same ? pick(@same) : { id => $una->($a), shape => $a->{shape} };
		my $c = emit("aten.gt %$a->{id}, %$b->{id}", $a->{shape}, 'bool');
		return emit("aten.where %$c, %$a->{id}, %$b->{id}", $a->{shape});
	},
	ropechain => sub {    # rotate of a permute of a slice, times itself: an index variable
		# within another, the same value read at three indices
		my $a = $_[0] // val();
		my @s = @{$a->{shape}};
		if (@s < 2) {
			my $n = $s[0];
			$a = { id => emit("aten.view %$a->{id} {size=[1, $n]}", [1, $n]), shape => [1, $n] };
			@s = (1, $n);
		}
		my $d = rnd(scalar @s);
		my ($b, $e, $k, $m) = bounds($s[$d]);
		$s[$d] = $m;
		my $sl = emit("aten.slice %$a->{id} {dim=$d, start=$b, end=$e, step=$k}", [@s]);
		my @p = (1 .. $#s, 0);   # a rotation of the axes: never the identity
		@p = reverse @p if rnd(2);
		@p = (1, 0) if @s == 2;
		my $pm = emit("aten.permute %$sl {dims=[" . join(', ', @p) . "]}", [map { $s[$_] } @p]);
		my @t = map { $s[$_] } @p;
		return $gen{rotate}->({ id => $pm, shape => [@t] }, 1);
	},
	ints => sub {    # through i64: x·x cast (toward 0), with its rotation's cast:
		# floor and trunc division, remainder, fmod, maximum, minimum; cast back
		my $a = val();
		my @s = @{$a->{shape}};
		my $t = emit("aten.mul %$a->{id}, %$a->{id}", [@s]);
		my $i = emit("cast %$t {dtype=\"i64\"}", [@s], 'i64');
		my $o = $gen{rotate}->($a);
		my $u = emit("aten.mul %$o, %$o", [@s]);
		my $j = emit("cast %$u {dtype=\"i64\"}", [@s], 'i64');
		my $f = pick(qw(div_floor div_trunc remainder fmod maximum minimum));
		my $r = emit("aten.$f %$i, %$j", [@s], 'i64');
		$r = emit("aten.$f %$r, %$i", [@s], 'i64') if rnd(2);
		return emit("cast %$r {dtype=\"f32\"}", [@s]);
	},
	linear => sub {    # a one-row product (the GEMV kernel), or two of one row (one
		# kernel), viewed as heads whose last dim (or another) is rotated and
		# multiplied by itself: small kernels after the GEMV whose elements
		# read its columns, which its blocks may compute (tune cuda.gemv.tail)
		my $a = val();
		my $k = numel($a->{shape});
		my $r = emit("aten.view %$a->{id} {size=[1, $k]}", [1, $k]);
		my ($h, $d) = (1 + rnd(3), 2 * (1 + rnd(6)));
		my $y = emit("aten.linear %$r, %" . input([$h * $d, $k]), [1, $h * $d]);
		if (rnd(2)) {   # a sibling, added after its own rotation
			my $z = emit("aten.linear %$r, %" . input([$h * $d, $k]), [1, $h * $d]);
			my $v = emit("aten.view %$z {size=[1, $h, $d]}", [1, $h, $d]);
			my $q = $gen{rotate}->({ id => $v, shape => [1, $h, $d] }, 1);
			my $w = emit("aten.view %$y {size=[1, $h, $d]}", [1, $h, $d]);
			return emit("aten.add %$w, %$q {alpha=1.0}", [1, $h, $d]);
		}
		my $v = emit("aten.view %$y {size=[1, $h, $d]}", [1, $h, $d]);
		return $gen{rotate}->({ id => $v, shape => [1, $h, $d] }, rnd(2));
	},
	gather => sub {    # along d at an i64 input's indices (negative ones too)
		my $a = val();
		my @s = @{$a->{shape}};
		my $d = rnd(scalar @s);
		my $m = 1 + rnd(5);
		my $name = 'i' . scalar @ins;
		my $i = emit("input {name=\"$name\"}", [$m], 'i64');
		npy("$dir/$name.npy", '<i8', [$m], map { rnd($s[$d] * 2) - $s[$d] } 1 .. $m);
		push @ins, $name;
		$s[$d] = $m;
		return emit("aten.index %$a->{id}, %$i {dim=$d}", [@s]);
	},
);
my @kinds = (sort(keys %gen), ('ropechain') x 3, 'rotate');   # those more often
@kinds = split ' ', $ENV{KERNFUZZ_KINDS} if $ENV{KERNFUZZ_KINDS};   # to look at some alone

input(randshape());
input(randshape()) if rnd(2);
my $nops = 5 + rnd(10);
$gen{pick(@kinds)}->() for 1 .. $nops;
# the outputs: the last value, and one before it
my @outs = ($vals[-1]{id});
my $o = $vals[rnd($#vals)]{id};
push @outs, $o if $o != $outs[0] && $ir[$o] !~ / = input /;
open my $f, '>', "$dir/k.ir" or die "$dir/k.ir: $!";
print $f "# kernfuzz.pl $seed\ndpir 1.0 k import\n", join("\n", @ir), "\n";
print $f "return " . join(', ', map { "y$_=%$_" } @outs) . "\n";
close $f;
open $f, '>', "$dir/args" or die;
print $f join(' ', (map { "--in $_=$dir/$_.npy" } @ins), (map { "--out y$_=OUT.y$_.npy" } @outs)), "\n";
close $f;
open $f, '>', "$dir/outs" or die;
print $f join(' ', map { "y$_" } @outs), "\n";
close $f;
