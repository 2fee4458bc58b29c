// Configuration heuristics for the dense FP8 GEMM kernel (cuda/jax_deepgemm/fp8_gemm.cuh).
//
// The model. The kernel is persistent: grid = min(num_sms, tiles) CTAs (steps 14 and 15 take fewer where that keeps
// the rounds), one per SM, each walking over output tiles of BLOCK_M x BLOCK_N. Every tile streams its whole K extent
// (A: BLOCK_M x K bytes, B: BLOCK_N x K bytes) through the shared-memory pipeline. A 128-row tile costs about
// BLOCK_N + kTileOverhead time units: its wgmmas and its promotion scale with BLOCK_N, while streaming A's
// BLOCK_M x K bytes, the pipeline's start and the epilogue add a part that does not (kTileOverhead = 64 fits the
// H200 sweep of benchmarks/NOTES.md, 3); a 256-row tile does twice the work for the same overhead. The run takes about
//     waves x (BLOCK_N x BLOCK_M / 128 + kTileOverhead),   waves = ceil(tiles / num_sms)
// (unrounded for short ragged groups, step 16)
// We therefore
//   1. take BLOCK_M 64 when M <= 64 (one consumer warpgroup, no wasted rows), 128 when M <= 128 (two consumer
//      warpgroups, twice the reuse of every B tile; 64-row tiles measured 0-6% slower at M = 128, NOTES 8), else
//      the better of 128 and 256 (each warpgroup two 64-row waves: every B tile serves 256 rows, a quarter fewer
//      operand bytes per FLOP);
//   2. over the (BLOCK_M, BLOCK_N) candidates, minimise the cost above;
//   3. on a tie, maximise the number of tiles in the last wave (a fuller last wave leaves fewer SMs idle);
//   4. on a further tie, take the larger BLOCK_N (fewer tiles, fewer re-reads of A);
//   5. clusters of 2 where they measured faster. The kernel can run CTAs in clusters of 2 (the two take the tiles of
//      the same rows and adjacent N blocks, each loading half of the A tile for both through TMA multicast: half of
//      A's copies; grouped GEMMs need an even N-block count, dense ones pair an odd count's last N block's tiles
//      along M, without multicast), which pays only where the copies set the pace, against the lockstep of two
//      CTAs (a stage is refilled when the slower one is done). Measured on an H100
//      (benchmarks/NOTES.md, 17): contiguous and ragged grouped GEMMs with 256-row tiles +2-10%, k-grouped with
//      128-row tiles and at most 4 groups +2-10% (with 8, -2% to +1%), masked within 2% but for one shape's +10%
//      (off). k-grouped 256 x 128 tiles measured -0.3% to -1.3% on an H200 (NOTES 25), but 0.9-2.5% faster on an
//      H100 since (NOTES 75, 4 and 8 groups): on (not with the TMA store, step 17). Contiguous, ragged and masked
//      GEMMs whose rows cross 32-byte sectors (rows_cross_sectors below) 13-26% faster at 128-row tiles (NOTES 75):
//      on there (64-row ones unmeasured). Dense GEMMs
//      take them where a tile's copies set its pace (copies_set_pace: 256 x 64, 128 x 192, 128 x 128, not
//      256 x 128) over long K and many rows: measured on an H100 (NOTES 17, 18), M = 4096 / 6144, N = 2112,
//      56 K blocks +12-13% (256 x 64, 128 x 192), 128 x 128 forced at 4096 x 7168 x 16384 +25%, but 16 K blocks
//      -8%, M = 2048 +1.5%, 256 x 128 -3% to +3% (NOTES 6 and 12 found that on the H200 too), M = 64 / 128 on an
//      H200 -3% to -12%: on at M >= 2048 and >= 32 K blocks. 256 x 128 tiles take them over K >= 16384 (128 K
//      blocks), where the halved copies of A outweigh the lockstep: kernel time on both GPUs (NOTES 29, two
//      rounds), M = 4096 / 8192, K = 16384 / 32768 -0.7% to -2.3%, K = 8192 -0.1% to -0.6%, K <= 4096 +0.3% to +0.8%.
//      Only with at least two waves: every measured case had several; a lone wave stays as it was. Dense GEMMs whose
//      A and B rows are not 128-byte multiples (rows_unaligned) take them from 12 K blocks on, at any M and at one
//      wave too (NOTES 75: 5-36% faster at M = 64 to 8192, aligned controls -0.7% to +1.6%).
//      Dense GEMMs with per-row B scales take them only there or with FP32 out over long K (step 17).
//      DG_TUNE_CLUSTER=1 / 2 turns them off / on everywhere (2: dense GEMMs always, grouped ones wherever the
//      N-block count is even). A dense cluster shares B instead of A where BLOCK_N > BLOCK_M (the two CTAs take
//      adjacent M blocks of one N block): each CTA then copies BLOCK_M + BLOCK_N / 2 rows per K block rather than
//      BLOCK_M / 2 + BLOCK_N. Measured on an H100 (NOTES 35, clusters forced, same call): 128 x 192 at N = 2112
//      -5%, 256-row tiles +4% to +6% (A there is the larger side). DG_TUNE_MULTICAST_B=0 / 1 forces A / B.
// BLOCK_N candidates are the multiples of 16 that the kernel supports (fp8_gemm_block_n_supported) up to a register
// cap: a consumer thread holds two FP32 accumulator sets of BLOCK_N / 2 registers each (the wgmma result and the
// scaled sum), so BLOCK_N = 192 already needs 192 of its registers; with per-row B scales the cap is 176; BLOCK_M
// 256 keeps one scaled sum per wave, three sets, so its cap is 128. With
// 128x128 B scales, a width that makes tiles straddle 128-column scale blocks pays a scale selection per 8 columns
// in every promotion; measured on an H200 (benchmarks/NOTES.md, 3), 144 and 176 ran 10-20% slower than 128 and 192
// on the same shapes, so the candidates are the widths dividing 128 and 160, 192 (at most two scale blocks, split
// at a multiple of 32). DG_TUNE_BLOCK_M / DG_TUNE_BLOCK_N force one BLOCK_M / width (any supported one, in every
// mode), for sweeps and for testing every configuration.
// Grouped GEMMs use the same model with the tiles they are expected to have: each group's rows
//     r = M / G (contiguous, ragged: the rows spread evenly) or expected_m (masked)
// choose BLOCK_M as M does for dense and give G * ceil(r / BLOCK_M) M blocks (ragged: at most ceil(M / BLOCK_M) + G,
// one partial tile per group); contiguous: ceil(M / BLOCK_M), its groups being runs of whole 128-row blocks, plus at
// 256 rows G - 1: an expert boundary may cut a 256-row tile, which then takes two passes (one per expert, each with
// half its waves idle) and costs two tiles (with the segment walk of step 11 no tile straddles, and about G / 4 would
// be nearer; step 12 decides these groups' BLOCK_M from 384 rows on anyway). Long runs (M / G >> 256) therefore take
// 256-row tiles, short ones 128 (short ragged ones over K >= 2048 always: step 16; ragged ones under 768 rows over
// K < 6144 too: step 19).
// Masked: G * (r / BLOCK_M + 1/2) (at most G * ceil(M / BLOCK_M)): masked_m scatters around expected_m, so a group's
// last tile is on average half empty.
// The grid comes from the static bound fp8_gemm_max_tiles, never from r.
// K-grouped: G full M x N grids whose tiles stream about K / G each.
// 6. Masked takes tiles of at most 128 x 128 (large groups over long K excepted, below; mid-size ones at N >= 4096:
//    step 20), k-grouped 128-row tiles of at most 128 columns or 256 x 128 (a forced BLOCK_M / width may still be any
//    the kernel takes). The model undercounts what wider or taller tiles lose there: masked tiles are few per CTA
//    (little for the TMA store and the accumulator pipeline to overlap) and a group's partial last tile wastes more
//    rows at 256; k-grouped's FP32 output with C and per-row scales on both sides make each promotion and epilogue of
//    a wide 128-row tile dearer than kTileOverhead.
//    Measured on an H200 (benchmarks/NOTES.md, 11): 128 x 128 beat the model's picks (128 x 160/192, 256 x 128) on
//    every masked and k-grouped shape of the benchmark; since the 256-row loop's rework (NOTES 17) 256 x 128 beats 128
//    x 128 on every k-grouped shape of the benchmark (M = 4096 / 7168: +6-9% on an H200, +5-10% on an H100, NOTES 25;
//    the 256 x 112 the model takes at M = 256 / 512 is unmeasured) but still loses on masked ones (1-17% slower on
//    five of six, 4.5% faster on one). With the tail split (step 10) that changed for large groups: over six masked_m
//    draws per shape on an H100 (NOTES 50), 256 x 128 with the tail split against 128 x 128, geometric means 1 x 1024
//    x 4096 x 7168 -4.8%, 2 x 512 x 4096 x 7168 -5.1% (per draw -16% to +7%; without the tail split +3.5% / +5%), but
//    4 x 256 / 8 x 128 / 16 x 64 rows +3% to +17% and K = 2048 (no tail split) 0% to +10%. So masked groups of
//    expected_m >= kMaskedTallMinRows over K with the tail split take 256 x 128 (the width measured; the cost alone
//    would take 256 x 64 there). Checked again on an H200 (NOTES 95: 128 x 128 / 160 / 192 and 256 x 128 forced over
//    six masked_m draws of nine shapes): these picks were the fastest static choice or within 2.2% of it on eight
//    shapes (4 x 256 x 4096 x 7168: 128 x 192 6.4% faster), but the fastest tile changes with the draw (up to 39%),
//    and wider masked tiles for groups of 129-511 rows over long K lost 0.3% on shapes held out: not taken (at
//    N >= 4096 they are: step 20).
// 7. The accumulator pipeline (two accumulators per consumer, fp8_gemm_acc_pipeline_supported: tiles up to
//    128 x 128) is on wherever it applies (k-grouped too since its promotion stopped spilling: +2-4%, NOTES 13);
//    DG_TUNE_ACC_PIPELINE=0 / 1 turns it off / on everywhere it applies. Its kernels with at least
//    kPairedMinStages stages pair them (two K blocks per barrier round trip, fp8_gemm_paired_stages_supported):
//    on an H100 (NOTES 48) -2% to -5% where it moved with 10-16 stages (64 x 64 tiles over 13, 128 x 32 over 10; the
//    64 x 32 rows within +-1%), but up to +30% with 5 or 8 (2-4 pairs: a pair is held until both of its K blocks
//    are done, which leaves the producer too short a lead). DG_TUNE_PAIRED_STAGES=0 / 1 turns it off / on everywhere it
//    applies.
// 8. Half-width wgmma groups (fp8_gemm_split_halves_supported: one wave per consumer, BLOCK_N > 128, where the
//    pipeline does not fit) wherever they apply: on an H100 forced 128 x 192 tiles ran 1.5-18% faster with them on
//    every shape measured (NOTES 20); DG_TUNE_SPLIT_HALVES=0 turns them off. Their 192- and 160-wide loops take each
//    chunk's scale block at compile time (NOTES 32: 192 5-11% faster again; NOTES 33: 160 -2.5% to -4.9%), so dense
//    128 x 192 tiles win the model's ties with 256 x 64 (cost_of's kHalfWidth192Discount; N = 2112 at
//    M = 4096 / 8192: -8% to -14%).
// 9. Split K (dense GEMMs; fp8_gemm_split_k_supported): where the choice above is one wave of at most 128-row tiles
//    over >= 16 K blocks (small M, long K), a CTA's time per tile is its K blocks times the dearest of what each
//    costs to copy in (NOTES 17 on an H100: ~2.8 cycles per 128-byte row, at least ~400 per K block; small tiles are
//    bound by it), its tensor-core time (BLOCK_M x BLOCK_N / 16 cycles at ~4096 FP8 FLOP per SM cycle) and its
//    share of the HBM stream of B, so tiles twice as wide (half as many, the A rows copied half as often) with their
//    K blocks split over a cluster of 2 CTAs take about half the time where the copies set the pace, plus the
//    exchange of the partial tiles (split_k_tile_cycles). Taken where the model expects at most 0.8 of the unsplit
//    time, with the width it expects fastest among those that keep one wave. Measured (NOTES 22, same runs, split
//    against unsplit): 64 / 128 x 2112 x 7168 -14% / -10% on an H100, -27% / -20% on an H200; where B's HBM stream
//    binds (64 / 128 x 4096 x 7168, 64 x 7168 x 16384) +15% / +7% / +2% on the H100 and -0% / -5% / -3% on the H200,
//    which the HBM term, at the GPU's own peak bandwidth (hbm_gbs), rules out on the H100 and, for the first two,
//    lets through on the H200 (NOTES 30); 128 x 128 split tiles (128 x 7168 x 16384, 256 x 4096 x 7168; ruled out
//    by the tensor-core term and by needing >= 4 stages) 0% to +32% slower on the H200. Clusters of 4
//    (DG_TUNE_SPLIT_K=4 only) ran 1.2-1.7x slower.
//    DG_TUNE_SPLIT_K=1 turns split K off; 2 / 4 force it on the unsplit choice's tiles.
// 10. Tail split (fp8_gemm_tail_split_supported: dense, contiguous, masked; no multicast, no split K): the kernel
//    counts its tiles on the device, and when the last round would keep at most half of the CTAs busy, the CTAs
//    run in pairs (clusters of 2) that each take one of those tiles with half of its K blocks: the last round
//    takes about half as long, plus one exchange of a partial tile. But a tail-split kernel's whole tiles run
//    ~0.5 us slower each (not explained, NOTES 27), which only long K amortizes. Measured on an H200 (same runs,
//    benchmark's masked rows): K = 7168 -10% / -13% where the last round splits, -0.2% where it does not;
//    K = 2048 +4% (all three split); dense 256 x 128 rows with K <= 2048 +5-10% (one without a split). So it is
//    on for masked GEMMs (whose tile count the host cannot know: masked_m is on the device) with at least
//    kTailSplitMinKBlocks K blocks, for dense ones where step 21 takes it, and elsewhere only forced.
//    DG_TUNE_TAIL_SPLIT=0 / 1 turns it off / on wherever it applies.
// 11. Contiguous segments (fp8_gemm_segments_supported: contiguous 256-row tiles without the tail split): the fixed
//    grid of 256-row tiles puts every expert boundary that is not a multiple of 256 rows inside a tile, which then
//    takes two K loops (one per expert) on one CTA, and under the static round robin the CTAs holding such tiles set
//    the kernel's time; tiles that walk segments (runs of 128-row blocks of one expert, like ragged groups) give each
//    expert its own tiles instead. The walk has a cost of its own per tile that short K does not amortize. Measured
//    (benchmarks/NOTES.md 64, 65: the segment walk against the fixed grid on the benchmark's contiguous rows and two
//    K = 4096 ones): on an H100, one build, with the walk's tiles on the TMA store only (65), K = 7168 -2.7% / -3.7%,
//    K = 4096 -1.7% / -4.3%, K = 2048 +2.3% / +0.7%; before that, on an H200 against a table of the same machine
//    (64), K = 7168 -1.6% / -2.4%, K = 2048 +4.0% / +1.3%. So it is on from kSegmentsMinKBlocks K blocks.
//    DG_TUNE_SEGMENTS=0 / 1 turns it off / on wherever it applies (a forced tail split, DG_TUNE_TAIL_SPLIT=1, keeps
//    the fixed grid it counts).
// 12. Contiguous and ragged groups of at least kGroupedTallMinRows = 384 rows (M / G) take 256 x 128 tiles where
//    the cost picks that width for 256-row tiles (on narrower ones it keeps its own choice): contiguous ones where
//    step 11's walk is on (K >= 4096), ragged ones from K >= 2048 (under K = 6144 from 768 rows: step 19). There the
//    cost above takes 128 x 192 / 160 / 128 tiles, which it prices at 0.80 / 0.70 / 0.60 of a 256 x 128 wave;
//    measured (66), 128 x 192 / 160 waves took 0.82-0.97 of its time.
//    Why is not known: every B tile serves half as many rows, which the model counts only through kTileOverhead.
//    Measured on an H100, one build, two rounds, 256 x 128 against the previous picks (benchmarks/NOTES.md 66, 67;
//    G x nominal rows x N x K, groups drawn in [0.7, 1.3] x nominal, contiguous ones padded to 128 rows, M / G in
//    brackets where it decides):
//    contiguous 8 x 1024 x 7168 x 7168 -10.8%, 8 x 512 x 7168 x 7168 -9.5% / -10.0%, 16 x 512 x 4096 x 7168 -3.5%,
//    4 x 1024 x 7168 x 4096 -1.9% / -2.6%, 16 x 384 x 7168 x 7168 (448) -5.9%, 16 x 384 x 4096 x 7168 (464) -4.7%,
//    8 x 512 x 4096 x 4096 -4.9%, 24 x 320 x 4096 x 7168 (384) -0.8%, 16 x 420 x 4096 x 4096 (520) -2.6%, but
//    12 x 448 x 7168 x 4096 (512) +2.2%; ragged -10.9% to -17.4% on the first three, 8 x 512 x 7168 x 2048 -4.3%,
//    8 x 1024 x 4096 x 2048 -8.6%, 16 x 384 x 7168 x 2048 (385) -2.1%, 16 x 400 x 7168 x 2048 (395) -2.0%,
//    16 x 420 x 4096 x 4096 (447) -5.3%, 12 x 448 x 7168 x 4096 (445) -2.5%.
//    Under 384 rows it is mixed, so not taken: contiguous -7.5% (288) and -2.5% (336) at N = K = 7168, but +1.5%
//    (296) and +6.6% (336) at N = 4096, K = 7168, -0.5% (373) and +3.1% (325) at K = 4096; ragged (307-318) +3.4% at
//    K = 2048, +5.2% at K = 4096, -2.4% at K = 7168. Nor contiguous at K = 2048 (the fixed grid, whose 256-row tiles
//    straddle experts): +6% to +49%.
//    Contiguous groups over K < kTallAnyKBlocks K blocks take 256-row tiles only where a group's output (M /
//    G x N, padding included) exceeds kContiguousTallMinOutput. On an H200 (benchmarks/NOTES.md 87: contiguous groups
//    of 384-2048 rows at N = 2048 / 4096 / 7168 and K = 4096 / 5120 / 7168, and published models' MoE layers; one
//    build, the 256-row pick against the cost's 128-row tiles, 128 x 192 / 160 / 128) the 128-row ones ran 0.3-16%
//    faster on 26 of the 30 rows this bound moves (M / G of 464-2026 rows, N = 1536-7168; +0.3%, +0.4%, +2.3%, +3.5% on
//    four), and -3.8% to +4.5% against 256-row ones on larger outputs there (+5.4% to +9.4% on Mixtral's groups of 2048
//    rows x 28672 / 4096 columns); at K = 7168 -6.2% to +6.5%. Held out (NOTES 87): twelve rows -3.5% geometric mean,
//    two slower. A 256-row tile over an odd run of 128-row blocks computes half a tile of padding, a share that shrinks
//    with the group, and small outputs make few rounds, where the 128-row tiles' finer grain fills the last one better.
//    K from 6144 keeps the 256-row tiles (7168 measured; at 6144, measured after, 128-row tiles ran -8.3% to +2.8% on
//    ten small-output rows, -1.2% on average: the transition). H100: unmeasured.
// 13. C pulled into L2 ahead of the epilogue (fp8_gemm_c_prefetch_supported: a C read by the register epilogue):
//    every CTA reaches its epilogues at about the same time (the same K per tile), so their C loads otherwise go to
//    HBM together while the tensor cores wait. The producer prefetches the tile's C block (one tensor prefetch) when
//    it copies the tile's last K block, kCPrefetchKBlocks from the end. Measured on an H100 (benchmarks/NOTES.md 74,
//    one build, two rounds, k-grouped rows of the benchmark with f32 C): 1 K block -1.3% to -3.3%, 2 -0.9% to -3.0%,
//    4 -0.6% to -2.3%, 8 -0.1% to -1.3%, 16 +0.4% to +2.3% (earlier prefetches lose: their lines wait in L2 beside
//    the operands' longer). So k-grouped takes it; dense GEMMs with C do not (at 2 / 4 K blocks: 4096 x 7168 x 2048
//    with bf16 C -4.8% / -4.1%, 4096 x 7168 x 16384 with f32 C -0.9%, but 4096 x 4096 x 7168 and 2048 x 2112 x 7168
//    with f32 C +0.8% to +1.3%). DG_TUNE_C_PREFETCH=D prefetches D K blocks before the end wherever it applies, 0
//    never.
// 14. A balanced grid (dense and k-grouped 256-row tiles over at least kBalancedMinKBlocks K blocks per tile): the grid
//    cut to whole rows of the tile order's bands (kFp8BandNBlocks CTAs) where that keeps the number of rounds of tiles,
//    e.g. 128 CTAs instead of 132 for 896, 880 or 512 tiles; then every round takes whole band rows. (DeepGEMM's
//    heuristics launch as few CTAs as keep the rounds.) Measured on an H100 (benchmarks/NOTES.md 76, one build, the SM
//    count capped at 128 against 132, two rounds): 4096 x 7168 x 16384 -1.2%, 4096 x 7000 x 7000 -2.1%, 4096 x 4096 x
//    7168 -0.2%; one round: k-grouped 4 x 4096 x 7168 x 8192 -1.0%, 4 x 7168 x 2048 x 8192 -0.7%, 8 x 7168 x 2048 x
//    4096 -1.1%; over short K it is even or loses (K = 2048 0.0%, 1536 +0.1%, 512 +2.6%; why is not measured).
//    DeepGEMM's own kernel ran 1.3% faster on 128 CTAs than on 132 here (4096 x 7168 x 16384). On an H200 it was not
//    measured in one build: its table with the rule moved those rows by +0.2% / -0.2% / -0.3% against the table
//    before, on another machine (NOTES 77).
//    Why it pays is not measured: fewer SMs drawing power under the cap, or rounds that read whole band rows of A and
//    B. Only 128 CTAs were measured, hence whole band rows rather than the fewest CTAs (880 tiles: 126); 128-row tiles
//    keep the full grid (but for step 15's).
// 15. Dense 128 x 192 tiles over at least kBalancedMinKBlocks K blocks: no clusters (step 5 would take them, sharing
//    B), on the fewest CTAs that keep the rounds (4096 x 2112 x 7168: 352 tiles in 3 rounds on 118 CTAs rather than
//    132), as DeepGEMM launches its 128 x 192 kernel. Measured on an H200 (benchmarks/NOTES.md 80, one build, the SM
//    count capped, two rounds, against the pick before this step: clusters of 2 sharing B on 132 CTAs): M = 4096 /
//    8192 x 2112 x 7168 -3.6% / -3.2%, 4096 x 2112 x 4096 -3.3%, 4096 x 1536 x 7168 (2 rounds, 128 CTAs) -3.7%,
//    16384 x 2112 x 7168 (128 CTAs) -0.8%; on the four rows of >= 3% either change alone took at most half of that
//    (the clusters on the smaller grid -1.2% to -1.9%, +0.2% on 4096 x 1536 x 7168; no clusters on 132 CTAs -0.3% on
//    4096 x 2112 x 7168), on 16384 x 2112 x 7168 the smaller grid alone -1.0%. K = 2048 (16 K blocks, no clusters
//    before either) lost 0.8% on 118 CTAs: not taken there. Other widths are unmeasured and keep step 5.
// 16. Ragged groups of fewer than kGroupedTallMinRows rows (M / G): the host never sees their sizes, and step 5's count
//    fills 256-row tiles exactly where M / G is a multiple of 256 (4096 rows over 16 groups), though about half the
//    groups then need one more tile. So over K >= 2048 (kRaggedTallMinKBlocks) they take 128-row tiles, and since
//    their tile count is a guess, their cost takes its waves unrounded (rounded, 64 groups of 128 rows at N = 2048
//    tied 7.8 waves of 128 x 128 tiles with 5.3 of 128 x 192, which ran up to 6% faster). Measured on an H200
//    (benchmarks/NOTES.md 94: 256 x 128 and 128 x 128 / 160 / 192 forced on MoE layers of published models and
//    synthetic ones, group sizes drawn even, [0.7, 1.3] x M / G, and skewed; the rest against the previous picks): 256
//    x 128 was the fastest only on even draws averaging 130-192 rows per group (5.1% / 5.4% / 9.5% ahead of 128 x 192)
//    and lost 0.7-16% on skewed ones. Over the 30 rows measured, this step's picks came within 1.3% of each row's
//    fastest tile on average (at most 9.5%), the previous ones within 3.1% (13.5%). Against the previous picks (one
//    build per side, two rounds): on the 18 rows it moves -3.7% geometric mean, -10.0% to +9.5% (+4.9% to +9.5% on
//    those even draws); 6 controls within 0.2%.
// 17. Dense GEMMs with per-row B scales (the weight gradients' kind) take clusters only where their rows are not
//    128-byte multiples, or with FP32 out over kLongKBlocks. Their promotion, an FMUL and an FFMA per element, holds
//    the loop near half the tensor rate (benchmarks/NOTES.md 46), so the copies hardly set its pace and a cluster
//    brings mostly its lockstep. Measured on an H200 (NOTES 121): tiles and clusters forced at M = 2048 to 18432,
//    K = 4096 / 8192, 256 x 128 and 256 x 96 tiles 6-11% slower in clusters than without; against the picks before
//    (one build per side, two rounds) on 14 rows whose clusters this turned off, bf16 out -3.9% to -8.4% (256 x 96 /
//    112 / 128, K = 4096 to 16384), FP32 out and FP32 C -3.4% to -5.2% at K <= 8192 but +1.1% / +0.2% at 4096 x 7168
//    x 16384 (256 x 128, no TMA store), which therefore keeps them, as k-grouped's FP32 tiles do (step 5).
//    K-grouped tiles with the TMA store (bf16 out over short K) take none either. Forced on nine MoE weight-gradient
//    shapes (NOTES 121), bf16 out ran 1.5-3.4% faster without clusters on the three with the TMA store (K = 1024 /
//    2048 per group) and -0.8% to +1.3% on the others, while FP32 out with C ran 0.5-8.7% faster in clusters; against
//    the picks before (one build per side, two rounds), seven shapes with the TMA store (K = 512 to 2048 per group)
//    -0.1% to -3.2%.
// 18. Contiguous, ragged and k-grouped GEMMs take their tiles past the first round from a device counter
//    (JDG_DYNAMIC_TILES: each cluster the next tile when it is free, not every grid-th one), so that clusters that drew
//    cheap tiles (a group's last M block, a short K segment) or ran ahead take more. Measured on an H200
//    (benchmarks/NOTES.md 134, one build, two rounds), against the static order: ragged MoE shapes -1.9% to -4.5%
//    (aligned groups too), the table's ragged rows -1.4% to -3.2%, its k-grouped rows -1.3% to -6.9%, the MoE training
//    step's kernels -173 us (-3.2%); as committed (the leader's own slot by st.async), again (NOTES 135): -1.4% to
//    -3.8%, -1.3% to -7.1%, the step -195 us (-3.5%). Contiguous GEMMs too since their tiles are published whole by the
//    tile ids' warp, which takes each index itself (no queue warp, NOTES 144): against the static order before, the
//    table's contiguous rows and three more shapes -0.6% to -3.7% (one build, two rounds; the static order with whole
//    tiles -1.3% to +2.8%), moe_models.py's contiguous layers against whole tiles in the static order geomean -1.4%
//    (-4.8% to +2.9%, 20 layer draws). Ragged and masked tiles are published whole by that warp too (NOTES 146:
//    against the queue warp, the table's ragged rows and four more shapes -1.6% to +0.4%, masked in the static order
//    -0.3% to -4.8%, one build per side, two rounds), and k-grouped ones with their K range (NOTES 147: against the
//    queue warp, the table's k-grouped rows -1.6% / -1.8% at N = 7168, level at N = 2048). Forced elsewhere: masked
//    -0.5% to +5.3% (their reader warps do not stay warp-uniform in ptxas's view, NOTES 134; with masked's group walk
//    bounded as ragged's, uniform, -1.9% to +7.1%, NOTES 135; with whole tiles level with the static order but for
//    one row, +3.5%, NOTES 146), dense -0.2% / +2.7% (from the tile ids' warp +0.4% to +4.4% more, NOTES 147, with
//    -1.9% / -2.8% of it back in NOTES 148); those keep the static order.
// 19. Ragged groups of fewer than kRaggedShortKTallMinRows = 768 rows (M / G) over K < 6144 (kTallAnyKBlocks) take
//    128-row tiles, where step 12 (from 384 rows over K >= 2048) or the cost (under K = 2048) took 256 x 128. Each
//    ragged group ends in a partial tile, which wastes on average half a tile: at 256 rows a larger share of a small
//    group, and over short K the 256-row tiles' faster K loop does not win it back. Measured on an H200
//    (benchmarks/NOTES.md 150; one build, the default against DG_TUNE_BLOCK_M=128, i.e. this step's 128 x 192 / 160
//    tiles, two rounds within 0.8%): in sample (even draws of 384-2048-row groups at K = 2048-5120, published models'
//    MoE layers) 128-row tiles ran -0.4% to -9.2% on all 12 rows of ~512-row groups at K = 2048-5120, -2.9% to +1.9%
//    at 384 rows, but -1.4% to +7.2% (11 of 12 slower) from 1024 rows, +2.2% at K = 7168 (512 rows) and +6.7% to
//    +10.0% on Mixtral's 2048-row groups; held out (16 rows of 256-740-row groups at K = 1024-5120, even and skewed
//    draws) -2.3% geometric mean, -9.6% to +3.4%, 9 faster, 576-740-row groups level (+0.1%, 3 of 8 faster).
// 20. Masked groups of 129-511 expected rows (kMaskedMidMinRows up to kMaskedTallMinRows) over K that the tail split
//    takes, with N >= kMaskedMidMinN = 4096 and rows of whole 32-byte sectors, take 128 x 192 tiles (with the tail
//    split) rather than step 6's 128 x 128: a third fewer N blocks, so each group's A rows are copied by fewer tiles
//    (that this is why it pays is not measured). Measured on an H200 (benchmarks/NOTES.md 152; one build per side, two
//    rounds, four masked_m draws per shape, expected_m hint 1.2 x nominal): in sample 4 x 256 x 4096 x 7168 -7.3%
//    geometric mean (-12.2% to +1.3% per draw), four more -1.4% to -4.8%; held out six shapes at N = 4096-7168,
//    K = 4096-7168 -2.5% on average (-6.2% to +1.5%; 8 x 192 x 4096 x 7168 the one slower); 8 x 128 (hint 153)
//    -1.8%. Twelve more draws of three of them -2.5% to -5.5% (per draw up to +4.6%, as on the benchmark table's
//    draw, +4.4%), Mixtral's decode layers (8 experts, N x K 28672 x 4096 and 4096 x 14336, 128 / 256 rows) -2.0% to
//    -7.7%. The N bound is empirical: NOTES 95's wider rule lost +5.8% on 16 x 192 x 2048 x 7168, though 192-wide
//    tiles pad N = 2048 and N = 4096 alike (3%); why that shape lost is not measured. K whose rows cross sectors
//    takes clusters there (step 5), which exclude the tail split: unmeasured with these tiles, so left out. So are
//    per-row B scales (1x128), whose tiles are at most kMaxBlockNPerRowScale = 176 wide: step 6's search.
// 21. Dense picks narrower than the full-width tiles (128 x 192, 256 x 128) and without the accumulator pipeline (128 x
//    160, 256 x 64, ...) over K >= 4096 (kTailSplitMinKBlocks) move to a full-width tile whose last round (at most
//    half of the SMs, after at least one whole round) the tail split halves, where the model, counting that round as
//    half a wave, prices it strictly lower; without clusters (they exclude the split). Not at M <= 128 (split K's
//    ground), with per-row B scales, rows that are not 128-byte multiples (step 5's clusters), forced tiles, clusters
//    or split K, nor under DG_TUNE_TAIL_SPLIT=0 / 1. Rounds are counted over num_sms, as everywhere in the model; the
//    kernel decides the split from its own grid (pairs: one CTA fewer on an odd SM count). Measured on an H200
//    (benchmarks/NOTES.md 153; one build, the default against DG_TUNE_TAIL_SPLIT=0, two rounds): the first form (any
//    tile whose last round the split halves, in the search's own cost) lost 2.9% / 4.9% (geometric means, 12 + 10
//    rows): full-width picks given the other full-width tile with the split ran 5.6-13.9% slower (given 256 x 64
//    +26.9%, 128 x 160 -3.6%), pipelined 128 x 128 picks given 128 x 192 11-18% slower (given 256 x 128 -0.4% to
//    -5.0%), while 128 x 160 and 256 x 64 picks ran -18.8% to +3.2% (+3.2%: a tie in the model, hence "strictly"). The
//    rule as it is: on the first runs' eight rows it moves -6.5% (-11.2% to +0.8%), on twelve rows held out -7.6%
//    (-12.7% to +1.0%; 2048 x 2112 x 7168 62.3 -> 55.3 us). Why the other tiles lose with the split is not measured.
// 22. Dense picks of one round of tiles under 128 columns (128 x 64, 256 x 64 / 32 / 16; step 21's bounds otherwise)
//    take a tile whose tiles fill at most half of the SMs, each split over K by a pair of CTAs (the kernel's tail split
//    takes a single round of at most half of its grid as a short last round), where the model prices that half wave
//    strictly lower: 384 x 4096 x 7168, 128 tiles of 256 x 64, takes 66 of 128 x 192 on 132 CTAs. Measured on an H200
//    (benchmarks/NOTES.md 155; one build, the default against DG_TUNE_TAIL_SPLIT=0, two rounds): in sample ten rows
//    -25.5% geometric mean (-58.3% to +5.7%), held out nine -28.5% (-52.1% to +5.4%; 384 x 3072 x 16384 79.7 -> 39.2
//    us). The losses are at K = 4096 / 5120 (128 x 64 +5.7%, +5.4%; 256 x 64 +1.5%): a split round costs R / 2 plus ~4
//    us of exchange and its code ~3% (NOTES 155), which the model, without K, does not count. Picks of 128 columns or
//    more are left out: pipelined 128 x 128 ones, split, ran 10-13% slower on four of eight rows, level on two,
//    11-13% faster on two (K = 14336; 72 of 132 SMs busy); wider ones are untried.
// Stages: as many as fit into the opt-in shared memory (kMaxDynamicSmemBytes, layout in fp8_gemm_smem_bytes), at
// most kMaxStages = 16, and at most ceil(K / 128) + 1: one tile's whole K plus the first block of the next tile is
// all a persistent CTA can usefully prefetch. Only small tiles (M = 64 / 128: 64 x 16 ... 128 x 32 over long K) reach
// more than 8; on an H200 16 rather than 8 changed them by -2% to +3% (benchmarks/NOTES.md, 8): harmless, kept.
// DG_TUNE_STAGES caps them (>= 2), for measuring how a kernel's speed depends on its stages (NOTES 56). A cap too
// low for the tail split's exchange (fp8_gemm_tail_split_supported) turns the split off; step 6's masked 256 x 128
// tiles, chosen for it, then run without it.
#include "heuristics.h"

#include <jax_deepgemm/fp8_gemm_abi.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <utility>

#include "env.h"

namespace jdg {
namespace {

constexpr int kMaxBlockN = 192;          // 128x128 B scales
constexpr int kMaxBlockNPerRowScale = 176;  // 1x128 B scales
constexpr int kMaxBlockNTwoWaves = 128;     // BLOCK_M 256
constexpr int kMaxStages = 16;
constexpr int kMinStages = 2;
constexpr int kPairedMinStages = 10;  // step 7: paired stages from 5 pairs on
constexpr int kTileOverhead = 64;  // a tile's cost that does not scale with BLOCK_N, in BLOCK_N units (see the model)
constexpr std::int64_t kTailSplitMinKBlocks = 32;  // step 10: K >= 4096
constexpr std::int64_t kSegmentsMinKBlocks = 32;  // step 11: K >= 4096
constexpr std::int64_t kLongKBlocks = 128;  // step 5: dense tiles of any shape take clusters from K >= 16384 on
constexpr std::int64_t kUnalignedMinKBlocks = 12;  // step 5: dense rows that are not 128-byte multiples, clusters
                                                   // from 12 K blocks (K > 1408) on
constexpr int kCPrefetchKBlocks = 1;  // step 13: the tile's last K block
constexpr std::int64_t kBalancedMinKBlocks = 32;  // step 14: K >= 4096 per tile

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// Step 10's default: where the tail split pays (masked GEMMs over long K), unless DG_TUNE_TAIL_SPLIT says otherwise.
bool tail_split_pays(int mode, std::int64_t k) {
  return mode == kFp8GemmMasked && ceil_div(k, kFp8BlockK) >= kTailSplitMinKBlocks;
}

// Step 11: contiguous 256-row tiles walk expert segments over long K, or as DG_TUNE_SEGMENTS says (decided before the
// tail split, which a segment walk excludes: not where DG_TUNE_TAIL_SPLIT=1 forces that).
bool segments_pay(int mode, int block_m, std::int64_t k) {
  if (!fp8_gemm_segments_supported(mode, block_m, false) || env::tune_tail_split() == 1) return false;
  return env::tune_segments().value_or(ceil_div(k, kFp8BlockK) >= kSegmentsMinKBlocks);
}

// Step 13: C into L2 ahead of the epilogue, k-grouped only unless DG_TUNE_C_PREFETCH says otherwise.
void choose_c_prefetch(Fp8GemmConfig& c, int mode, std::int64_t n, int c_kind) {
  const int forced = env::tune_c_prefetch();
  const int wanted = forced >= 0 ? forced : (mode == kFp8GemmKGrouped ? kCPrefetchKBlocks : 0);
  c.c_prefetch = fp8_gemm_c_prefetch_supported(c_kind, c.tma_store, n) ? wanted : 0;
}

// `problem` describes the call ("fp8_gemm m=... n=... k=... num_sms=..."); printed once per distinct line (a
// DG_TUNE_* change gives a new one).
void print_once(const std::string& problem, const Fp8GemmConfig& c) {
  static std::mutex mutex;
  static auto* printed = new std::set<std::string>();
  char line[512];
  std::snprintf(line, sizeof(line),
                "jax_deepgemm: %s -> block_m=%d block_n=%d stages=%d threads=%d smem=%d tiles=%lld waves=%lld "
                "cluster=%d%s grid=%d tma_store=%d acc_pipeline=%d paired_stages=%d split_halves=%d split_k=%d "
                "tail_split=%d segments=%d c_prefetch=%d dynamic_tiles=%d\n",
                problem.c_str(), c.block_m, c.block_n, c.stages, c.num_threads, c.smem_bytes,
                static_cast<long long>(c.tiles), static_cast<long long>(c.waves), c.cluster,
                c.multicast_b ? " (B multicast)" : "", c.grid,
                int(c.tma_store), int(c.acc_pipeline), int(c.paired_stages), int(c.split_halves), c.split_k,
                int(c.tail_split), int(c.segments), c.c_prefetch, int(c.dynamic_tiles));
  std::lock_guard<std::mutex> lock(mutex);
  if (printed->insert(env::print_configs_value() + '\n' + line).second) std::fputs(line, stderr);
}

// Step 5's dense case: per 128-wide K block a tile copies BLOCK_M + BLOCK_N rows of 128 bytes, ~2.8 SM cycles each
// on an H100 (benchmarks/NOTES.md, 17), and its wgmmas take BLOCK_M x BLOCK_N / 32 cycles; 2.8 x 32 ~ 90 cycles,
// taken as 80 so that 256 x 128 tiles (measured without gain from clusters up to K = 8192: they are near the
// tensor-core rate) stay out; over longer K, kLongKBlocks takes them in.
bool copies_set_pace(int block_m, int block_n) { return 80 * (block_m + block_n) > block_m * block_n; }

// Step 5: whether A's and B's rows (K bytes, 16-byte aligned) are not 128-byte multiples. Each 128-byte box row then
// spans two L2 lines, and the copies set the pace of any tile: in clusters sharing half of them, dense GEMMs ran
// 5-36% faster at M = 64 to 8192, at one wave too (NOTES 75).
bool rows_unaligned(std::int64_t k) { return k % kFp8BlockK != 0; }

// Step 5: whether those rows also cross 32-byte sectors (K % 32 = 16): five sectors per box row instead of four.
// Grouped GEMMs measured in clusters only there (13-26% faster; masked rows of whole sectors, K = 7008: +3.1%).
bool rows_cross_sectors(std::int64_t k) { return k % 32 != 0; }

// Step 5, and the grid: min(num_sms, `bound` tiles), in whole clusters. `multicast_pays`: the model's case for
// clusters (step 5) holds for this problem. Grouped modes pair N blocks only; dense ones pair the tiles of an odd
// N-block count's last N block along M (fp8_gemm_abi.h), whose last pair may be one tile past M: hence the bound
// rounded up to whole clusters; dense clusters sharing B pair every N block's tiles along M (one tile past M per N
// block with an odd M-block count).
// Split K (step 9) takes the cluster for itself: no multicast then. Then the tail split (unless DG_TUNE_TAIL_SPLIT
// says otherwise: `tail_split_wanted`, steps 10 and 21) and the grid: with the tail split, up to two CTAs per tile (so
// that a lone round's tiles can all be split).
// How the grid is cut below min(num_sms, tiles) where that keeps the rounds: not (kFull), to whole rows of the tile
// order's bands (kBandRows, step 14) or to the fewest CTAs (kFewest, step 15).
enum class GridCut { kFull, kBandRows, kFewest };

void set_cluster_and_grid(Fp8GemmConfig& c, int mode, std::int64_t n, std::int64_t k, int num_sms, std::int64_t bound,
                          bool multicast_pays, bool tail_split_wanted, bool one_wave_too = false,
                          GridCut cut = GridCut::kFull) {
  const bool pairs = mode == kFp8GemmDense || ceil_div(n, c.block_n) % 2 == 0;
  const int forced = env::tune_cluster();
  if (forced > 2) throw std::invalid_argument("DG_TUNE_CLUSTER=" + std::to_string(forced) + " is not 1 or 2");
  const bool wanted = forced == 0 ? multicast_pays && (c.waves >= 2 || one_wave_too) : forced == 2;
  c.cluster = num_sms >= 2 && pairs && wanted && c.split_k == 1 ? 2 : 1;
  // A dense cluster shares the operand with more rows per tile: B where BLOCK_N > BLOCK_M (the two CTAs take
  // adjacent M blocks of one N block), halving more of each CTA's copies (NOTES 35: 128 x 192 tiles -5% with B
  // shared, 256-row tiles +4-6% with B shared instead of A).
  const int multicast_b = env::tune_multicast_b();
  if (multicast_b > 1)
    throw std::invalid_argument("DG_TUNE_MULTICAST_B=" + std::to_string(multicast_b) + " is not 0 or 1");
  c.multicast_b = c.cluster == 2 && mode == kFp8GemmDense &&
                  (multicast_b < 0 ? c.block_n > c.block_m : multicast_b == 1);
  if (c.multicast_b && bound > 0) {  // dense: bound = M blocks x N blocks
    const std::int64_t n_blocks = ceil_div(n, c.block_n);
    bound = ceil_div(bound / n_blocks, 2) * 2 * n_blocks;
  }
  const int tail = env::tune_tail_split();
  if (tail > 1) throw std::invalid_argument("DG_TUNE_TAIL_SPLIT=" + std::to_string(tail) + " is not 0 or 1");
  c.tail_split = (tail == 1 || (tail < 0 && tail_split_wanted)) && num_sms >= 2 && !c.segments &&
                 fp8_gemm_tail_split_supported(mode, k, c.block_m, c.block_n, c.stages, c.cluster, c.split_k);
  const std::optional<bool> dynamic = env::tune_dynamic_tiles();
  c.dynamic_tiles =
      dynamic.value_or(mode == kFp8GemmRagged || mode == kFp8GemmContiguous || mode == kFp8GemmKGrouped) &&
      c.split_k == 1 && !c.tail_split;  // step 18
  const int ctas = fp8_gemm_cluster_ctas(c.cluster, c.split_k, c.tail_split);  // per cluster
  const std::int64_t whole_clusters = ceil_div(bound * c.split_k * (c.tail_split ? 2 : 1), ctas) * ctas;
  c.grid = static_cast<int>(std::min<std::int64_t>(num_sms / ctas * ctas, whole_clusters));
  if (cut == GridCut::kBandRows && c.split_k == 1 && !c.tail_split) {  // step 14 (`bound`: the tiles, exactly)
    const int band_rows = c.grid / kFp8BandNBlocks * kFp8BandNBlocks;  // a band row: one tile per N block
    if (band_rows > 0 && ceil_div(whole_clusters, band_rows) == ceil_div(whole_clusters, c.grid)) c.grid = band_rows;
  }
  if (cut == GridCut::kFewest && c.split_k == 1 && !c.tail_split && c.grid > 0) {  // step 15
    const std::int64_t rounds = ceil_div(whole_clusters, c.grid);
    c.grid = static_cast<int>(ceil_div(ceil_div(whole_clusters, rounds), ctas) * ctas);
  }
}

// Step 14: whether a grid as small as keeps the rounds pays: 256-row tiles of at least kBalancedMinKBlocks K blocks,
// in the modes whose tile count the host knows (dense; k-grouped counts every group's tiles, empty ones too).
bool balanced_grid_pays(int mode, int block_m, std::int64_t k_per_tile) {
  return (mode == kFp8GemmDense || mode == kFp8GemmKGrouped) && block_m == 256 &&
         ceil_div(k_per_tile, kFp8BlockK) >= kBalancedMinKBlocks;
}

// Step 15: dense 128 x 192 tiles over at least kBalancedMinKBlocks K blocks, without clusters on the fewest CTAs.
bool wide_rows_unclustered(int block_m, int block_n, std::int64_t k) {
  return block_m == 128 && block_n == 192 && ceil_div(k, kFp8BlockK) >= kBalancedMinKBlocks;
}

std::string describe(const char* kind, std::int64_t m, std::int64_t n, std::int64_t k, int num_sms, bool per_row) {
  std::string forced;  // the DG_TUNE_* knobs in force, so that a forced choice is seen as one
  if (env::tune_block_m() > 0) forced += " tune_block_m=" + std::to_string(env::tune_block_m());
  if (env::tune_block_n() > 0) forced += " tune_block_n=" + std::to_string(env::tune_block_n());
  if (env::tune_cluster() > 0) forced += " tune_cluster=" + std::to_string(env::tune_cluster());
  if (const auto store = env::tune_tma_store()) forced += " tune_tma_store=" + std::to_string(int(*store));
  if (const auto pipeline = env::tune_acc_pipeline()) forced += " tune_acc_pipeline=" + std::to_string(int(*pipeline));
  if (const auto paired = env::tune_paired_stages()) forced += " tune_paired_stages=" + std::to_string(int(*paired));
  if (!env::tune_split_halves()) forced += " tune_split_halves=0";
  if (env::tune_split_k() >= 0) forced += " tune_split_k=" + std::to_string(env::tune_split_k());
  if (env::tune_tail_split() >= 0) forced += " tune_tail_split=" + std::to_string(env::tune_tail_split());
  if (const auto segments = env::tune_segments()) forced += " tune_segments=" + std::to_string(int(*segments));
  if (env::tune_c_prefetch() >= 0) forced += " tune_c_prefetch=" + std::to_string(env::tune_c_prefetch());
  if (env::tune_multicast_b() >= 0) forced += " tune_multicast_b=" + std::to_string(env::tune_multicast_b());
  if (env::tune_stages() > 0) forced += " tune_stages=" + std::to_string(env::tune_stages());
  return std::string(kind) + " m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) +
         " num_sms=" + std::to_string(num_sms) + (per_row ? " (per-row B scales)" : "") + forced;
}

void check_shape(const char* fn, std::int64_t m, std::int64_t n, std::int64_t k, int num_sms) {
  if (m < 0 || n < 1 || k < 1 || num_sms < 1)
    throw std::invalid_argument(std::string(fn) + ": need m >= 0, n >= 1, k >= 1, num_sms >= 1 (got m=" +
                                std::to_string(m) + ", n=" + std::to_string(n) + ", k=" + std::to_string(k) +
                                ", num_sms=" + std::to_string(num_sms) + ")");
}

// 128x128 B scales: widths whose tiles need no per-chunk scale selection, or a cheap one (see the model).
bool cheap_block_scales(int block_n) { return 128 % block_n == 0 || block_n == 160 || block_n == 192; }

// Step 6 of the model: the modes whose search stops at 128-wide 128-row tiles, and those that take 128-row ones only.
bool at_most_128_wide(int mode) { return mode == kFp8GemmMasked || mode == kFp8GemmKGrouped; }
bool at_most_128_rows(int mode) { return mode == kFp8GemmMasked; }
// ... but for masked groups expected to fill two 256-row tiles, over K that the tail split takes (step 10): those
// take 256 x 128.
constexpr std::int64_t kMaskedTallMinRows = 512;
// Step 20: masked groups of kMaskedMidMinRows up to kMaskedTallMinRows rows over the tail split's K, N >=
// kMaskedMidMinN and rows of whole sectors (128x128 B scales) take 128 x kMaskedMidBlockN.
constexpr std::int64_t kMaskedMidMinRows = 129;
constexpr std::int64_t kMaskedMidMinN = 4096;
constexpr int kMaskedMidBlockN = 192;
// Step 12: contiguous and ragged groups of at least kGroupedTallMinRows rows take 256-row tiles: contiguous ones
// where their tiles walk expert segments (step 11: the fixed grid's straddling tiles lose at K = 2048), ragged ones
// from K >= 2048 (not where DG_TUNE_BLOCK_M forces a BLOCK_M, nor DG_TUNE_BLOCK_N a width over 128: see choose_all).
// Under kTallAnyKBlocks K blocks a bound applies: contiguous groups' output, ragged groups' rows (step 19).
constexpr std::int64_t kGroupedTallMinRows = 384;
constexpr std::int64_t kRaggedTallMinKBlocks = 16;  // K >= 2048
constexpr std::int64_t kTallAnyKBlocks = 48;        // K >= 6144
constexpr std::int64_t kContiguousTallMinOutput = 4 << 20;  // rows (M / G, padding included) x N per group
constexpr std::int64_t kRaggedShortKTallMinRows = 768;      // step 19
// Ragged groups that take 128-row tiles only: short ones over K >= 2048 (step 16), and those under
// kRaggedShortKTallMinRows rows over K < 6144 (step 19).
bool ragged_128_rows_only(std::int64_t rows, std::int64_t k) {
  const std::int64_t k_blocks = ceil_div(k, kFp8BlockK);
  return (rows < kGroupedTallMinRows && k_blocks >= kRaggedTallMinKBlocks) ||
         (rows < kRaggedShortKTallMinRows && k_blocks < kTallAnyKBlocks);
}
bool grouped_tall(int mode, std::int64_t rows, std::int64_t n, std::int64_t k) {
  if (rows < kGroupedTallMinRows) return false;
  if (mode == kFp8GemmContiguous)
    return segments_pay(mode, 256, k) &&
           (ceil_div(k, kFp8BlockK) >= kTallAnyKBlocks || rows * n > kContiguousTallMinOutput);
  return mode == kFp8GemmRagged && ceil_div(k, kFp8BlockK) >= kRaggedTallMinKBlocks && !ragged_128_rows_only(rows, k);
}

// What the search needs to know of the problem.
struct Problem {
  int mode;              // JDG_GROUPED_MODE
  std::int64_t n, k;     // k: the K one tile streams
  int num_sms;
  bool b_scale_per_row;
  bool out_f32;
  int c_kind;
  int hbm_gbs;           // the GPU's peak HBM bandwidth (step 9); 0: unknown
  bool short_ragged;     // ragged groups of fewer than kGroupedTallMinRows rows (step 16)
};

// The model's cost of a configuration (see the top of the file). Dense 128 x 192 tiles (half-width groups, step 8)
// count kHalfWidth192Discount less per (half) wave: since their promotion takes each chunk's scale block at compile
// time (NOTES 32) they ran 5-11% faster, and on 4096 x 2112 x 7168, which the model ties with 256 x 64 tiles (3
// waves of 192 + 64 against 4 of 128 + 64), 113-114 us against 127; the discount only breaks such ties (the grouped
// modes' ties, e.g. 128 x 128 against 128 x 192 on short groups, are unmeasured and keep the rule below).
constexpr int kHalfWidth192Discount = 1;
// Counted in half waves: step 21 prices a last round the tail split halves (`last_round_halved`) as half a wave. For
// short ragged groups (step 16) tiles stand in for tiles / num_sms (costs are only compared within one problem).
std::int64_t cost_of(const Fp8GemmConfig& c, const Problem& p, bool last_round_halved = false) {
  const int discount = p.mode == kFp8GemmDense && c.split_halves && c.block_n == 192 ? kHalfWidth192Discount : 0;
  const std::int64_t half_waves = p.short_ragged ? 2 * c.tiles : 2 * c.waves - (last_round_halved ? 1 : 0);
  return half_waves * (c.block_n * c.block_m / 128 + kTileOverhead - discount);
}

// The TMA-store epilogue (DG_TUNE_TMA_STORE=1: wherever fp8_gemm_tma_store_supported allows; 0: never). Unset: in
// grouped GEMMs wherever it applies, in dense ones where a CTA takes 2 or more tiles, whose stores then overlap the
// next tile's K loop (NOTES 7: faster on every dense shape but the longest K, -1%; NOTES 60, 61: without it two rows
// of 2 tiles per CTA at K = 1024 ran 8% / 14% slower). A dense CTA with one tile has nothing to overlap: the store's
// staging tile costs a stage that is worth more there (NOTES 60, 61: the register epilogue with one more stage -1.4%
// to -4.6% on six of ten 64-multiple rows, +1.1% / +2.0% on two; on 128 x 160 the store ran 3.4% / 6.0% slower), so
// it is taken only where it costs no stage, and for widths that are not multiples of 64 (32- / 16-column atoms) not
// for split-K tiles either (0 to +2.6% slower with it). Grouped GEMMs of one tile per CTA measured the other way
// (NOTES 61: contiguous +1.4% to +6.3% without the store on five of six rows; ragged -2.0% to +3.2%), and masked
// ones' tile counts are guesses. K-grouped tiles (bf16 out) take it over short K only: at 256 x 128 it costs the
// 4th stage, which outweighs the epilogue it hides at long K. Measured on an H200 (benchmarks/NOTES.md 104, same
// draws, two rounds): 8 K blocks per tile (16 groups of 1024 tokens) -6.0% / -8.2%, 64 (4 groups of 8192) +1.7% /
// +2.6%; about level near 27 K blocks by that per-tile and per-K-block account, so on up to 16.
constexpr std::int64_t kKGroupedTmaStoreMaxKBlocks = 16;
bool tma_store_pays(const Problem& p, int block_n, int split_k, std::int64_t waves, bool costs_a_stage) {
  const auto forced = env::tune_tma_store();
  if (!fp8_gemm_tma_store_supported(p.n, block_n, p.out_f32, p.c_kind) || forced == false) return false;
  if (p.mode == kFp8GemmKGrouped && forced != true) return ceil_div(p.k, kFp8BlockK) <= kKGroupedTmaStoreMaxKBlocks;
  if (forced == true || waves >= 2 || p.mode != kFp8GemmDense) return true;
  if (costs_a_stage) return false;
  return fp8_gemm_d_atom_cols(block_n) == 64 || split_k == 1;
}

// The configuration of BLOCK_M x BLOCK_N tiles, `m_blocks` M blocks and `split_k` CTAs per tile (step 9) with the
// most stages that fit (see Stages at the top); everything but cluster and grid. False when not even the minimum fits.
bool make_config(const Problem& p, int block_m, int block_n, std::int64_t m_blocks, int split_k, Fp8GemmConfig& c) {
  const std::int64_t k_blocks = ceil_div(ceil_div(p.k, kFp8BlockK), split_k);  // one CTA's K blocks per tile
  const int forced_stages = env::tune_stages();
  if (forced_stages == 1)
    throw std::invalid_argument("DG_TUNE_STAGES=1: a kernel needs at least 2 stages (0 or unset: as many as fit)");
  const int stage_limit = forced_stages > 0 ? std::min(forced_stages, kMaxStages) : kMaxStages;
  const int stage_cap = static_cast<int>(std::min<std::int64_t>(stage_limit, k_blocks + 1));
  const int tile_id_rows = p.mode == kFp8GemmContiguous ? block_m : 0;
  auto smem_bytes = [&](int stages, bool tma_store) {
    return fp8_gemm_smem_bytes(block_m, block_n, stages, p.b_scale_per_row, tma_store, split_k, tile_id_rows);
  };
  auto stages_fitting = [&](bool tma_store) {
    for (int s = stage_cap; s >= 1; --s)
      if (smem_bytes(s, tma_store) <= kMaxDynamicSmemBytes)
        return s;
    return 0;
  };
  const std::int64_t tiles = m_blocks * ceil_div(p.n, block_n);
  const std::int64_t waves = ceil_div(tiles * split_k, p.num_sms / split_k * split_k);
  const bool tma_store = tma_store_pays(p, block_n, split_k, waves, stages_fitting(true) < stages_fitting(false));
  const int stages = stages_fitting(tma_store);
  if (stages < std::min(kMinStages, stage_cap)) return false;
  c = Fp8GemmConfig{};
  c.block_m = block_m;
  c.block_n = block_n;
  c.stages = stages;
  c.tma_store = tma_store;
  c.acc_pipeline = env::tune_acc_pipeline().value_or(true) && fp8_gemm_acc_pipeline_supported(block_m, block_n);
  c.paired_stages = fp8_gemm_paired_stages_supported(c.acc_pipeline, stages) &&
                    env::tune_paired_stages().value_or(stages >= kPairedMinStages);
  c.split_halves = env::tune_split_halves() && !c.acc_pipeline &&
                   fp8_gemm_split_halves_supported(block_m, block_n, p.b_scale_per_row);
  c.split_k = split_k;
  c.tiles = tiles;
  c.waves = waves;
  c.num_threads = fp8_gemm_num_threads(block_m);
  c.smem_bytes = smem_bytes(stages, tma_store);
  return true;
}

// The search over BLOCK_N (steps 2-4 of the model) for a fixed BLOCK_M and `m_blocks` expected M blocks, as a
// challenger to `best` (block_n 0: none yet), which it updates; fills everything but grid (the TMA-store epilogue
// as tma_store_pays says: its staging tile costs pipeline stages).
// `only_block_n` > 0: that width alone (unless one is forced).
void choose(const Problem& p, int block_m, std::int64_t m_blocks, Fp8GemmConfig& best, std::int64_t& best_last_wave,
            int only_block_n = 0) {
  const int num_sms = p.num_sms;
  const bool b_scale_per_row = p.b_scale_per_row;
  const int forced = env::tune_block_n() > 0 ? env::tune_block_n() : only_block_n;
  // Masked and k-grouped search widths up to 128 only (step 6 of the model); a forced width may be any the kernel
  // takes.
  const int max_block_n = block_m > 128 || (at_most_128_wide(p.mode) && forced == 0) ? kMaxBlockNTwoWaves
                          : b_scale_per_row                                          ? kMaxBlockNPerRowScale
                                                                                     : kMaxBlockN;
  for (int block_n = 16; block_n <= max_block_n; block_n += 16) {
    if (!fp8_gemm_block_n_supported(block_n)) continue;
    if (forced > 0 ? block_n != forced : !b_scale_per_row && !cheap_block_scales(block_n)) continue;
    Fp8GemmConfig c;
    if (!make_config(p, block_m, block_n, m_blocks, 1, c)) continue;
    const std::int64_t last_wave = c.tiles - (c.waves - 1) * num_sms;
    const std::int64_t cost = cost_of(c, p), best_cost = cost_of(best, p);
    bool better = best.block_n == 0 || cost < best_cost ||
                  (cost == best_cost && last_wave > best_last_wave) ||
                  (cost == best_cost && last_wave == best_last_wave && block_n > best.block_n);
    if (!better) continue;
    best = c;
    best_last_wave = last_wave;
  }
}

// Steps 1-4 over the BLOCK_M candidates for `rows` rows per group (the M blocks of candidate BLOCK_M: m_blocks_of).
template <typename MBlocks>
Fp8GemmConfig choose_all(const Problem& p, std::int64_t rows, MBlocks m_blocks_of) {
  const bool no_256 = at_most_128_rows(p.mode) || (p.mode == kFp8GemmRagged && ragged_128_rows_only(rows, p.k));
  const int candidates[] = {rows <= 64 ? 64 : 128, rows > 128 && !no_256 ? 256 : 0};
  const int forced_m = env::tune_block_m(), forced_n = env::tune_block_n();
  if (forced_m > 0 && !fp8_gemm_block_m_supported(forced_m))  // forcing may pick what the search would not
    throw std::invalid_argument("DG_TUNE_BLOCK_M=" + std::to_string(forced_m) + " is not a BLOCK_M the kernel "
                                "supports (64, 128 or 256)");
  Fp8GemmConfig best;
  std::int64_t best_last_wave = -1;
  // (Only where the tail split will be on: not with it turned off, nor in forced clusters, which exclude it.)
  const bool tail_split_on = tail_split_pays(p.mode, p.k) && env::tune_tail_split() != 0 && env::tune_cluster() != 2;
  const bool masked_tall = tail_split_on && rows >= kMaskedTallMinRows && p.n >= 128;
  const bool masked_mid = tail_split_on && rows >= kMaskedMidMinRows && rows < kMaskedTallMinRows &&
                          p.n >= kMaskedMidMinN && !rows_cross_sectors(p.k) && !p.b_scale_per_row;  // step 20
  if (forced_m > 0) {
    choose(p, forced_m, m_blocks_of(forced_m), best, best_last_wave);
  } else if (masked_tall && forced_n == 0) {
    choose(p, 256, m_blocks_of(256), best, best_last_wave, 128);
  } else if (masked_mid && forced_n == 0) {
    choose(p, 128, m_blocks_of(128), best, best_last_wave, kMaskedMidBlockN);
  } else {
    // Step 12 where the cost's 256-row pick is 128 wide (or the forced width): the tiles it was measured on. (A forced
    // width over 128 needs 128-row tiles.)
    Fp8GemmConfig tall;
    std::int64_t tall_last_wave = -1;
    if (grouped_tall(p.mode, rows, p.n, p.k) && forced_n <= kMaxBlockNTwoWaves)
      choose(p, 256, m_blocks_of(256), tall, tall_last_wave);
    if (tall.block_n == (forced_n > 0 ? forced_n : 128)) {
      best = tall;
      best_last_wave = tall_last_wave;
    } else {
      for (int block_m : candidates)
        if (block_m > 0) choose(p, block_m, m_blocks_of(block_m), best, best_last_wave);
    }
  }
  if (best.block_n == 0 && forced_n > 0)
    throw std::invalid_argument("DG_TUNE_BLOCK_N=" + std::to_string(forced_n) + " is not a BLOCK_N the kernel can "
                                "use here (a multiple of 16 up to 192, 176 with per-row B scales, 128 at BLOCK_M "
                                "256, that fits)");
  if (best.block_n == 0) throw std::logic_error("select_fp8_gemm_config: no BLOCK_N candidate fits shared memory");
  return best;
}

// Step 9's model: SM cycles one CTA spends on a tile of `k_blocks` K blocks while `ctas` CTAs run (one wave), each
// K block the dearest of its copies at kCopyCyclesPerRow per 128-byte row, kKBlockFloorCycles (benchmarks/NOTES.md,
// 17, on an H100), its wgmma at kMmaFlopsPerCycle, and its share of the chip's HBM stream of B (A is small and
// comes from L2: every CTA's B rows are new bytes), plus, with split K, the exchange: the partial tiles at ~32
// bytes per cycle through the cluster's shared memory and a fixed part.
constexpr double kCopyCyclesPerRow = 2.8;
constexpr double kKBlockFloorCycles = 400;
constexpr double kMmaFlopsPerCycle = 4096;  // dense FP8 wgmma per SM: ~990 TFLOPS over 132 SMs at ~1.83 GHz
// B's HBM stream on an H100 SXM (3352 GB/s peak), ~2.4 TB/s at ~1.75 GHz: about what the unsplit small-M kernels
// reach there (2.0-2.4 TB/s on 64 x 4096 x 7168, depending on how much of its time is fixed), and the rate at which
// the model splits exactly the shapes that measured faster split on the H100 (NOTES 22). Other GPUs scale it by
// their peak (hbm_gbs): an H200's 4.8-4.9 TB/s gives ~1950 bytes per cycle, at which the model also splits tiles
// that were measured split on an H200 only (NOTES 22: -5% / -10% on 128 x 4096 x 7168 / 256 x 2112 x 7168, 0% on
// 64 x 4096 x 7168; NOTES 30). Unknown (hbm_gbs 0): the H100's rate.
constexpr double kHbmBytesPerCycle = 1350;
constexpr double kHbmReferenceGbs = 3352;
double hbm_bytes_per_cycle(int hbm_gbs) {
  return hbm_gbs > 0 ? kHbmBytesPerCycle * hbm_gbs / kHbmReferenceGbs : kHbmBytesPerCycle;
}
constexpr double kExchangeFixedCycles = 500;
double split_k_tile_cycles(int block_m, int block_n, std::int64_t k_blocks, int split_k, std::int64_t ctas,
                           int hbm_gbs) {
  const double mma = 2.0 * block_m * block_n * kFp8BlockK / kMmaFlopsPerCycle;
  const double hbm = static_cast<double>(ctas) * block_n * kFp8BlockK / hbm_bytes_per_cycle(hbm_gbs);
  const double per_k_block = std::max({kKBlockFloorCycles, kCopyCyclesPerRow * (block_m + block_n), mma, hbm});
  const double exchange = split_k == 1 ? 0 : kExchangeFixedCycles + fp8_gemm_split_k_partial_bytes(block_m, block_n,
                                                                                                   split_k) / 32.0;
  return static_cast<double>(ceil_div(k_blocks, split_k)) * per_k_block + exchange;
}

// Step 9: `best` (dense, chosen without split K) with its tile's K blocks split over 2 CTAs where the model expects
// that to take at most kSplitKGain of the time (unset or DG_TUNE_SPLIT_K=0), or over DG_TUNE_SPLIT_K CTAs (1: never).
constexpr double kSplitKGain = 0.8;
constexpr std::int64_t kSplitKMinKBlocks = 16;
// The model does not count what the partial tiles' shared memory costs in stages: split 128 x 128 tiles with 3
// stages measured 21-32% slower than unsplit on an H200, and one with 4 (the register epilogue) the same as unsplit
// (NOTES 22). Wider split tiles (128 x 160: 3 stages), which the faster HBM of an H200 would otherwise pick, are
// left out with them; every split tile measured faster kept 7 or more.
constexpr int kSplitKMinStages = 4;
void choose_split_k(const Problem& p, std::int64_t m_blocks, Fp8GemmConfig& best) {
  const int tuned = env::tune_split_k();
  const int forced = tuned >= 0 ? tuned : 0;  // unset: the model's choice
  if (forced != 0 && forced != 1 && forced != 2 && forced != 4)
    throw std::invalid_argument("DG_TUNE_SPLIT_K=" + std::to_string(forced) + " is not 1, 2 or 4");
  if (forced > 1) {
    if (p.num_sms < forced)
      throw std::invalid_argument("DG_TUNE_SPLIT_K=" + std::to_string(forced) + " needs at least that many SMs (" +
                                  std::to_string(p.num_sms) + " given)");
    if (!fp8_gemm_split_k_supported(p.mode, best.block_m, 1, forced))
      throw std::invalid_argument("DG_TUNE_SPLIT_K=" + std::to_string(forced) + " needs BLOCK_M <= 128 (got " +
                                  std::to_string(best.block_m) + "; force DG_TUNE_BLOCK_M=64 or 128)");
    Fp8GemmConfig c;
    if (!make_config(p, best.block_m, best.block_n, m_blocks, forced, c))
      throw std::invalid_argument("DG_TUNE_SPLIT_K=" + std::to_string(forced) + ": the partial tiles of " +
                                  std::to_string(best.block_m) + " x " + std::to_string(best.block_n) +
                                  " leave no room for two stages");
    best = c;
    return;
  }
  const std::int64_t k_blocks = ceil_div(p.k, kFp8BlockK);
  // Not where clusters are forced for multicast (DG_TUNE_CLUSTER=2), which split K would take away.
  if (forced == 1 || env::tune_cluster() == 2 || best.waves != 1 || best.block_m > 128 ||
      k_blocks < kSplitKMinKBlocks || p.num_sms < 2)
    return;
  const double unsplit = split_k_tile_cycles(best.block_m, best.block_n, k_blocks, 1, best.tiles, p.hbm_gbs);
  Fp8GemmConfig pick;
  double pick_cycles = kSplitKGain * unsplit;
  for (int block_n = 16; block_n <= (p.b_scale_per_row ? kMaxBlockNPerRowScale : kMaxBlockN); block_n += 16) {
    if (!p.b_scale_per_row && !cheap_block_scales(block_n)) continue;
    if (env::tune_block_n() > 0 && block_n != env::tune_block_n()) continue;
    Fp8GemmConfig c;
    if (!make_config(p, best.block_m, block_n, m_blocks, 2, c) || c.waves != 1 || c.stages < kSplitKMinStages)
      continue;
    const double cycles = split_k_tile_cycles(best.block_m, block_n, k_blocks, 2, 2 * c.tiles, p.hbm_gbs);
    if (cycles < pick_cycles) {
      pick = c;
      pick_cycles = cycles;
    }
  }
  if (pick.block_n != 0) best = pick;
}

// The bounds steps 21 and 22 share: dense GEMMs over K >= 4096 at M > 128, 128x128 B scales and 128-byte rows,
// nothing forced, no split K.
bool dense_tail_split_may_pay(const Problem& p, std::int64_t rows, const Fp8GemmConfig& best) {
  return env::tune_tail_split() < 0 && env::tune_cluster() != 2 && env::tune_block_m() <= 0 &&
         env::tune_block_n() <= 0 && ceil_div(p.k, kFp8BlockK) >= kTailSplitMinKBlocks && !p.b_scale_per_row &&
         !rows_unaligned(p.k) && rows > 128 && best.split_k == 1;
}

// Steps 21 and 22: `c`, whose last round the tail split halves, becomes `pick` where the model prices it strictly
// lower than `best` and than the pick so far (none: block_n 0).
void keep_if_cheaper(const Problem& p, const Fp8GemmConfig& best, const Fp8GemmConfig& c, Fp8GemmConfig& pick) {
  const std::int64_t cost = cost_of(c, p, true);
  if (cost < cost_of(best, p) && (pick.block_n == 0 || cost < cost_of(pick, p, true))) pick = c;
}

// Step 21: where the dense pick is narrower than the full-width tiles (128 x 192, 256 x 128) and without the
// accumulator pipeline (128 x 160, 256 x 64 and the like), one of those full-width tiles whose short last round the
// tail split halves, if the model prices it lower; true if taken.
bool choose_tail_rounds(const Problem& p, std::int64_t rows, Fp8GemmConfig& best) {
  const bool full_width = (best.block_m == 128 && best.block_n == kMaxBlockN) ||
                          (best.block_m == 256 && best.block_n == kMaxBlockNTwoWaves);
  if (!dense_tail_split_may_pay(p, rows, best) || full_width || best.acc_pipeline) return false;
  // Whether the tail split halves a configuration's last round: at least two rounds, the last for at most half of
  // the SMs, tiles the split takes (without clusters).
  auto halves_last_round = [&](const Fp8GemmConfig& c) {
    const std::int64_t last_round = c.tiles - (c.waves - 1) * p.num_sms;
    return c.waves >= 2 && 2 * last_round <= p.num_sms &&
           fp8_gemm_tail_split_supported(p.mode, p.k, c.block_m, c.block_n, c.stages, 1, c.split_k);
  };
  Fp8GemmConfig pick;
  for (const auto [block_m, block_n] : {std::pair{128, kMaxBlockN}, std::pair{256, kMaxBlockNTwoWaves}}) {
    Fp8GemmConfig c;
    if (make_config(p, block_m, block_n, ceil_div(rows, block_m), 1, c) && halves_last_round(c))
      keep_if_cheaper(p, best, c, pick);
  }
  if (pick.block_n == 0) return false;
  best = pick;
  return true;
}

// Step 22: where the dense pick runs one round of tiles under 128 columns, a tile whose tiles fill at most half of the
// SMs, each tile's K blocks split over a pair of CTAs by the tail split (the whole round is its "last round"), if the
// model prices that half wave strictly lower. Its bounds are step 21's; true if taken.
bool choose_split_round(const Problem& p, std::int64_t rows, Fp8GemmConfig& best) {
  // (picks of 128 columns or more keep their round: see step 22 at the top)
  if (!dense_tail_split_may_pay(p, rows, best) || best.waves != 1 || best.block_n >= 128) return false;
  Fp8GemmConfig pick;
  for (const int block_m : {128, 256}) {
    for (int block_n = 16; block_n <= (block_m == 256 ? kMaxBlockNTwoWaves : kMaxBlockN); block_n += 16) {
      Fp8GemmConfig c;
      if (!cheap_block_scales(block_n) || !make_config(p, block_m, block_n, ceil_div(rows, block_m), 1, c) ||
          2 * c.tiles > p.num_sms ||
          !fp8_gemm_tail_split_supported(p.mode, p.k, c.block_m, c.block_n, c.stages, 1, c.split_k))
        continue;
      keep_if_cheaper(p, best, c, pick);
    }
  }
  if (pick.block_n == 0) return false;
  best = pick;
  return true;
}

}  // namespace

Fp8GemmConfig select_fp8_gemm_config(std::int64_t m, std::int64_t n, std::int64_t k, int num_sms,
                                     bool b_scale_per_row, bool out_f32, int c_kind, int hbm_gbs) {
  check_shape("select_fp8_gemm_config", m, n, k, num_sms);
  const std::int64_t rows = m > 0 ? m : 1;  // M = 0 launches nothing; choose as for one row
  const std::int64_t k_blocks = ceil_div(k, kFp8BlockK);
  const bool unaligned = rows_unaligned(k) && k_blocks >= kUnalignedMinKBlocks;
  const Problem p{kFp8GemmDense, n, k, num_sms, b_scale_per_row, out_f32, c_kind, std::max(hbm_gbs, 0), false};
  Fp8GemmConfig best = choose_all(p, rows, [&](int block_m) { return ceil_div(rows, block_m); });
  choose_split_k(p, ceil_div(rows, best.block_m), best);
  // Steps 21 and 22 (no clusters then: they exclude the tail split).
  const bool split_tail = choose_tail_rounds(p, rows, best) || choose_split_round(p, rows, best);
  const bool wide_rows = !unaligned && wide_rows_unclustered(best.block_m, best.block_n, k);  // step 15
  const bool per_row_unclustered = b_scale_per_row && !(out_f32 && k_blocks >= kLongKBlocks);  // step 17
  const bool multicast_pays =
      unaligned || (!split_tail && !wide_rows && !per_row_unclustered && m >= 2048 &&
                    ((k_blocks >= 32 && copies_set_pace(best.block_m, best.block_n)) || k_blocks >= kLongKBlocks));
  GridCut cut = GridCut::kFull;
  if (wide_rows) {
    cut = GridCut::kFewest;
  } else if (balanced_grid_pays(kFp8GemmDense, best.block_m, k)) {
    cut = GridCut::kBandRows;
  }
  set_cluster_and_grid(best, kFp8GemmDense, n, k, num_sms, m > 0 ? best.tiles : 0, multicast_pays, split_tail,
                       unaligned, cut);
  choose_c_prefetch(best, kFp8GemmDense, n, c_kind);
  if (env::print_configs())
    print_once(describe("fp8_gemm", m, n, k, num_sms, b_scale_per_row) + " hbm_gbs=" + std::to_string(hbm_gbs), best);
  return best;
}

Fp8GemmConfig select_grouped_fp8_gemm_config(int mode, std::int64_t m, std::int64_t n, std::int64_t k,
                                             std::int64_t g, std::int64_t expected_m, int num_sms,
                                             bool b_scale_per_row, bool out_f32, int c_kind) {
  check_shape("select_grouped_fp8_gemm_config", m, n, k, num_sms);
  if (mode < kFp8GemmContiguous || mode > kFp8GemmKGrouped)
    throw std::invalid_argument("select_grouped_fp8_gemm_config: mode must be 1 (contiguous), 2 (ragged), "
                                "3 (masked) or 4 (k-grouped), got " + std::to_string(mode));
  if (g < 1) throw std::invalid_argument("select_grouped_fp8_gemm_config: need g >= 1, got " + std::to_string(g));
  const std::int64_t rows = m > 0 ? m : 1;
  // Rows a group is expected to have (k-grouped: every group has all M rows, over about K / G of K).
  std::int64_t per_group = ceil_div(rows, g);
  if (mode == kFp8GemmMasked) per_group = expected_m > 0 ? std::min(expected_m, rows) : rows;
  if (mode == kFp8GemmKGrouped) per_group = rows;
  auto m_blocks_of = [&](int block_m) {
    if (mode == kFp8GemmContiguous) return ceil_div(rows, block_m) + (block_m > 128 ? g - 1 : 0);
    if (mode == kFp8GemmMasked)  // masked_m varies around expected_m: half a tile per group is wasted on average
      return std::min(g * ceil_div(rows, block_m), ceil_div(g * (2 * per_group + block_m), 2 * block_m));
    const std::int64_t blocks = g * ceil_div(per_group, block_m);
    return mode == kFp8GemmRagged ? std::min(blocks, ceil_div(rows, block_m) + g) : blocks;
  };
  const std::int64_t k_per_tile = mode == kFp8GemmKGrouped ? ceil_div(k, g) : k;
  const bool short_ragged = mode == kFp8GemmRagged && per_group < kGroupedTallMinRows;
  const Problem p{mode, n, k_per_tile, num_sms, b_scale_per_row, out_f32, c_kind, 0, short_ragged};  // no split K
  Fp8GemmConfig best = choose_all(p, per_group, m_blocks_of);
  best.segments = segments_pay(mode, best.block_m, k);
  const long long bound = fp8_gemm_max_tiles(mode, m, n, g, best.block_m, best.block_n, best.segments);
  const bool multicast_pays =
      ((mode == kFp8GemmContiguous || mode == kFp8GemmRagged) && best.block_m == 256) ||
      (mode == kFp8GemmKGrouped && !best.tma_store && (best.block_m == 256 || (g <= 4 && best.block_m == 128))) ||
      (mode != kFp8GemmKGrouped && rows_cross_sectors(k) && best.block_m >= 128);
  set_cluster_and_grid(best, mode, n, k, num_sms, m > 0 ? bound : 0, multicast_pays, tail_split_pays(mode, k), false,
                       balanced_grid_pays(mode, best.block_m, k_per_tile) ? GridCut::kBandRows : GridCut::kFull);
  choose_c_prefetch(best, mode, n, c_kind);
  if (env::print_configs()) {
    static const char* const kNames[] = {"fp8_gemm", "m_grouped_contiguous", "grouped_ragged", "m_grouped_masked",
                                         "k_grouped"};
    print_once(describe(kNames[mode], m, n, k, num_sms, b_scale_per_row) + " g=" + std::to_string(g) +
                   (mode == kFp8GemmMasked ? " expected_m=" + std::to_string(expected_m) : ""),
               best);
  }
  return best;
}

}  // namespace jdg
