# SPDX-License-Identifier: BSD-3-Clause
# Latency against I/O size, one line per in-capsule size; our stack and the kernel stack side by
# side on the same scale. Usage: gnuplot -e "datafile='plot.dat'; outfile='bench.png'" plot.gp
set terminal pngcairo size 1200,500 font ",10"
set output outfile
stats datafile using 2:7 nooutput
ymax = 0
do for [c=2:7] { stats datafile using c nooutput; if (STATS_max > ymax) { ymax = STATS_max } }
set yrange [0:ymax * 1.15]
set xrange [3:36]
set logscale x 2
set xtics ("4" 4, "8" 8, "16" 16, "32" 32)
set xlabel "write size (KiB), QD1 randwrite"
set ylabel "mean completion latency (µs), median of repetitions"
set key top left
set grid
set multiplot layout 1,2 title "NVMe-oF RDMA over soft-RoCE (rxe, QEMU TCG guest): write latency by target in-capsule size"
set title "our host -> our target"
plot datafile using 1:2 with linespoints title "in-capsule 4096", \
     '' using 1:4 with linespoints title "in-capsule 8192", \
     '' using 1:6 with linespoints title "in-capsule 16384"
set title "Linux nvme-rdma -> nvmet-rdma (null_blk)" noenhanced
plot datafile using 1:3 with linespoints title "in-capsule 4096", \
     '' using 1:5 with linespoints title "in-capsule 8192", \
     '' using 1:7 with linespoints title "in-capsule 16384"
unset multiplot
