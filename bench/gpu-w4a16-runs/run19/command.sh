# Device call of run 19 (one H200, 2026-12-02, branch wt-w4tp8, commit cfe90e0: the persistent tile's
# loop nested per tile, A fragments fenced): same payload as run 18, the TP8 shapes only. The
# 128-column persistent tile passed; the 256-column one still failed on rows 64-127 of a tile
# (correct.log.gz, 0.05-0.11, deterministic): the staging raced a wgmma of the other warpgroup
# (fixed in run 20). Images not committed.
cd bench/out/w4tp8 && mkdir -p /tmp/o && SMALL= timeout 540 bash bench/gpu-w4a16-tp8.sh bin /tmp/o; tar czf $OUT/run3.tgz -C /tmp/o .
