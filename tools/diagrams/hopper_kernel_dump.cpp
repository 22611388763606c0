// Prints what the pictures of chapters 10-12's composed kernels show, computed by the library's own
// code on the host: the tile schedulers' work walked for every block of a small grid, with the fixups
// run to see whose partial sums each finisher adds; the cluster pipeline's arrival counts and the TMA
// boxes each block of a multicast issues; the wgmma accumulator layout and the stmatrix epilogue of one
// chunk (emulated); swap-AB's transposed store. tools/diagrams/hopper_kernel_diagrams.py draws these
// facts from tools/diagrams/hopper_kernel_facts.txt, which is this program's output; the CTest
// plots.hopper_kernel_diagrams_facts runs it and fails if the output differs from that file, so a change
// of a schedule or a layout that changes a picture cannot go unnoticed.
//
// Usage: hopper_kernel_dump > tools/diagrams/hopper_kernel_facts.txt      (CPU only)
//
//   sched <name> <tiles_m> <tiles_n> <group_m> <k_steps> <blocks> <key> <value>
//   unit <name> <block> <j> <tile index> <m> <n> <k_begin> <k_end> <partial|final> [<block>.<j> ...]
//        unit j of `block` (in its order): K steps [k_begin, k_end) of tile (m, n); partial: its fixup
//        leaves a partial sum; final: it stores C (compute_epilogue), after its fixup added the partial
//        sums of the units listed (block.j; found by running the fixups with 2^unit in every unit's
//        accumulators, so the finisher's sum names the units it added)
//   cluster <ClusterM> <ClusterN> <consumer warpgroups> <empty arrivals>
//   release <ClusterM> <ClusterN> <rank> <t> ...    the threads t of a consumer warpgroup of block
//        `rank` that release a stage (in block t of the cluster: releases_in)
//   boxes <operand> <major> <extent0> <extent1> <multicast> <boxes> <per block> <transaction bytes>
//   box <operand> <major> <b> <origin0> <origin1> <extent0> <extent1> <bytes> <issuing rank>
//   acc <N> <m> <t>:<i> ...           row m of the 64×N accumulator tile: thread t's value i per column
//   stsm_reg <j> <q> <reg> <i>        store q of chunk j: register reg of every lane holds values i, i+1
//   stsm_addr <warp> <lane> <row> <col> (x4)   the chunk row and column the lane addresses, stores q = 0..3
//   stsm_elem <row> <t>:<i> ...       chunk 0 of a 64×64 tile after the emulated stmatrix: which thread's
//                                     value i each column of the row holds (rows 0-15, warp 0's)
//   swap <M> <N> <BM> <BN> <row stride> <col stride>   swap-AB: C (M×N) as the kernel's rows × cols
//   swap_store <warpgroup> <t> <offset> x NAcc   tile (0,0) of Cᵀ: where in C each value of thread t goes
//   grouped <experts> <tiles_n> <bm> <blocks> <rows of expert 0> ...   chapter 13's example
//   gunit <block> <j> <tile index> <expert> <m> <n> <row_begin> <row_end>   PersistentGroupTileScheduler's
//        unit j of `block` (contiguous experts, each aligned to bm rows)
//   lunit <expert> <block> <j> <m> <n>   the loop of one GEMM per expert: launch `expert`'s
//        PersistentTileScheduler on min(blocks, its tiles) blocks
//   swiglu <N> <threads> <values> <pairs>   chapter 13's SiLU(gate)·up epilogue on a 64×N tile: of the
//        threads × values pairs (value i, value i + N/4) of a thread, how many are one row, columns c and
//        c + N/2 (the same output's gate and up column)
//   swiglu_thread <t> <i>:<row>,<gate column>,<up column> ...   those pairs of one thread
#include <cuda_bf16.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "gemm/collective_epilogue_sm90.hpp"
#include "gemm/epilogue_sm90.hpp"
#include "gemm/pipeline.hpp"
#include "gemm/smem_layout_sm90.hpp"
#include "gemm/tile_scheduler_group_sm90.hpp"
#include "gemm/tile_scheduler_sm90.hpp"
#include "layout/all.hpp"
#include "layout/copy_traits_sm90_tma.hpp"
#include "layout/ldmatrix.hpp"
#include "layout/mma_sm90.hpp"

using namespace mm;
using bf16 = __nv_bfloat16;

namespace {

// ---- The schedules: one problem, three schedulers ----

constexpr int kTilesM = 3, kTilesN = 3, kGroupM = 16, kKSteps = 8, kBlocks = 4, kSplits = 2;
constexpr int kAcc = 8;  // accumulators of the one thread whose fixup is run (a 64×16 wgmma's: N = 2·kAcc is a wgmma N)

struct Unit {
  WorkTileInfo work;
  int block, j;
  bool final;
  std::vector<int> adds;  // ids of the units whose partial sums the fixup added
};

// Walks every block of `Scheduler`, then runs the fixups of thread 0 of consumer warpgroup 0 for every
// unit, the units that leave partial sums first: each unit's accumulators hold 2^id, so the finisher's
// hold the sum over the units it added (and its own).
template <class Scheduler>
std::vector<Unit> walk(typename Scheduler::Params params) {
  std::vector<Unit> units;
  for (int b = 0; b < kBlocks; ++b) {
    Scheduler s(params, b, kBlocks);
    int j = 0;
    for (WorkTileInfo w = s.get_current_work(); w.is_valid(); w = s.advance_to_next_work()) {
      units.push_back({w, b, j++, s.compute_epilogue(w), {}});
    }
  }
  if (units.size() > 24) {
    std::fprintf(stderr, "hopper_kernel_dump: %zu units: too many for one float's bits\n", units.size());
    std::exit(1);
  }
  std::vector<unsigned char> workspace;
  if constexpr (requires { Scheduler::workspace_bytes(params, 1); }) {  // the persistent scheduler has none
    workspace.assign(Scheduler::workspace_bytes(params, 1), 0);
    Scheduler::initialize_workspace(params, workspace.data(), 1);
  }
  WatchdogState watchdog;
  for (int pass = 0; pass < 2; ++pass)
    for (std::size_t id = 0; id < units.size(); ++id) {
      Unit& u = units[id];
      if (u.final != (pass == 1)) continue;
      Scheduler s(params, u.block, kBlocks);
      auto acc = make_gmma_accumulators<2 * kAcc>();  // a 64×(2·kAcc) wgmma's fragment, ((2,2,kAcc/4),1,1)
      for (int v = 0; v < kAcc; ++v) acc(v) = float(1u << id);
      s.fixup(u.work, acc, 0, 0, watchdog);
      if (!u.final) continue;
      const auto bits = std::uint32_t(acc(0));
      if (float(bits) != acc(0) || !(bits >> id & 1u)) {
        std::fprintf(stderr, "hopper_kernel_dump: unit %zu's fixup gave %g\n", id, double(acc(0)));
        std::exit(1);
      }
      for (std::size_t o = 0; o < units.size(); ++o)
        if (o != id && (bits >> o & 1u)) u.adds.push_back(int(o));
    }
  return units;
}

void print_units(const char* name, const std::vector<Unit>& units) {
  for (const Unit& u : units) {
    const WorkTileInfo& w = u.work;
    std::printf("unit %s %d %d %lld %d %d %d %d %s", name, u.block, u.j, static_cast<long long>(w.tile_index),
                w.tile.m, w.tile.n, w.k_begin, w.k_end, u.final ? "final" : "partial");
    for (int o : u.adds) std::printf(" %d.%d", units[std::size_t(o)].block, units[std::size_t(o)].j);
    std::printf("\n");
  }
}

void print_schedules() {
  const GroupedTileScheduler tiles{kTilesM, kTilesN, kGroupM};
  std::printf("sched data_parallel %d %d %d %d %d tiles %lld\n", kTilesM, kTilesN, kGroupM, kKSteps, kBlocks,
              static_cast<long long>(tiles.size()));
  print_units("data_parallel",
              walk<PersistentTileScheduler>(PersistentTileScheduler::to_underlying_arguments(tiles, kKSteps)));
  const SplitKTileScheduler split = SplitKTileScheduler::make(tiles, kKSteps, kSplits);
  std::printf("sched split_k %d %d %d %d %d splits %d\n", kTilesM, kTilesN, kGroupM, kKSteps, kBlocks, split.splits);
  print_units("split_k", walk<SplitKScheduler<kAcc>>(SplitKScheduler<kAcc>::to_underlying_arguments(split)));
  const StreamKTileScheduler stream = StreamKTileScheduler::make(tiles, kKSteps, kBlocks);
  std::printf("sched stream_k %d %d %d %d %d sk_tiles %lld\n", kTilesM, kTilesN, kGroupM, kKSteps, kBlocks,
              static_cast<long long>(stream.sk_tiles));
  print_units("stream_k", walk<StreamKScheduler<kAcc>>(StreamKScheduler<kAcc>::to_underlying_arguments(stream)));
}

// ---- The cluster: arrival counts and the boxes of a multicast ----

template <int CM, int CN>
void print_cluster(int consumers) {
  using P = PipelineTmaAsync<4, CM, CN>;
  std::printf("cluster %d %d %d %u\n", CM, CN, consumers, P::empty_arrivals(consumers));
  for (int rank = 0; rank < CM * CN; ++rank) {
    std::printf("release %d %d %d", CM, CN, rank);
    for (int t = 0; t < 128; ++t)
      if (P::releases_in(t, rank)) std::printf(" %d", t);
    std::printf("\n");
  }
}

template <class Stage, int Multicast>
void print_boxes(const char* operand, const char* major) {
  using B = TmaBoxes<bf16, Stage, Multicast>;
  std::printf("boxes %s %s %d %d %d %d %d %u\n", operand, major, B::kExtent0, B::kExtent1, Multicast, B::kBoxes,
              B::kBoxesPerBlock, B::kTransactionBytes);
  const int ext0 = B::kContiguous == 0 ? B::kBoxInner : B::kBoxOuter;
  const int ext1 = B::kContiguous == 0 ? B::kBoxOuter : B::kBoxInner;
  for (int b = 0; b < B::kBoxes; ++b)
    std::printf("box %s %s %d %d %d %d %d %d %d\n", operand, major, b, B::mode0_origin(b), B::mode1_origin(b), ext0,
                ext1, ext0 * ext1 * int(sizeof(bf16)), b / B::kBoxesPerBlock);
}

// Chapter 10's cluster_multicast (ClusterCfg): 128×256 tiles, K steps of 64, 2 blocks along M; A's
// stage loaded by each block alone, B's shared (SM90_TMA_LOAD_MULTICAST_2D with 2 blocks).
void print_multicast() {
  print_cluster<2, 1>(2);
  print_cluster<2, 2>(2);
  using StageA = GmmaStage<GmmaRing<bf16, GmmaMajor::K, _128, _64, 4>>;    // (128,64)
  using StageBmn = GmmaStage<GmmaRing<bf16, GmmaMajor::MN, _256, _64, 4>>; // (256,64), RRR
  using StageBk = GmmaStage<GmmaRing<bf16, GmmaMajor::K, _256, _64, 4>>;   // (256,64), RCR
  print_boxes<StageA, 1>("A", "K");
  print_boxes<StageBmn, 2>("B", "MN");
  print_boxes<StageBk, 2>("B", "K");
}

// ---- wgmma's accumulators and the stmatrix epilogue ----

template <int N>
void print_accumulators() {
  using CLayout = typename MMA_Traits<SM90_64xNx16_F32BF16BF16_SS<N, GmmaMajor::K, GmmaMajor::K>>::CLayout;
  std::vector<int> owner(64 * N, -1);  // m + 64·n -> 1000·t + i
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < N / 2; ++i) owner[std::size_t(CLayout{}(t, i))] = 1000 * t + i;
  for (int m = 0; m < 64; ++m) {
    std::printf("acc %d %d", N, m);
    for (int n = 0; n < N; ++n) {
      const int o = owner[std::size_t(m + 64 * n)];
      std::printf(" %d:%d", o / 1000, o % 1000);
    }
    std::printf("\n");
  }
}

// Chunk 0 of a 64×64 tile (N = 64: the chunk is the whole tile) through stmatrix_x4_on_host with the
// registers and addresses StsmAccumulatorMap gives, as tests/gemm/test_gemm_pieces.cpp does for N = 256.
void print_stmatrix() {
  constexpr int j = 0;
  for (int q = 0; q < 4; ++q)
    for (int reg = 0; reg < 4; ++reg) std::printf("stsm_reg %d %d %d %d\n", j, q, reg, StsmAccumulatorMap::acc_index(j, q, reg));
  for (int warp = 0; warp < 4; ++warp)
    for (int lane = 0; lane < 32; ++lane) {
      std::printf("stsm_addr %d %d", warp, lane);
      for (int q = 0; q < 4; ++q) std::printf(" %d %d", StsmAccumulatorMap::row(warp, lane), StsmAccumulatorMap::col(q, lane));
      std::printf("\n");
    }
  std::array<std::uint16_t, 64 * 64> chunk;  // row-major 64×64: 128·t + i of the value there
  chunk.fill(0xFFFF);
  for (int warp = 0; warp < 4; ++warp)
    for (int q = 0; q < 4; ++q) {
      std::array<std::array<std::uint32_t, 4>, 32> regs{};
      std::array<void*, 32> rows{};
      for (int lane = 0; lane < 32; ++lane) {
        const int t = 32 * warp + lane;
        for (int reg = 0; reg < 4; ++reg) {
          const int i = StsmAccumulatorMap::acc_index(j, q, reg);
          regs[std::size_t(lane)][std::size_t(reg)] = std::uint32_t(128 * t + i) | std::uint32_t(128 * t + i + 1) << 16;
        }
        rows[std::size_t(lane)] =
            &chunk[std::size_t(64 * StsmAccumulatorMap::row(warp, lane) + StsmAccumulatorMap::col(q, lane))];
      }
      stmatrix_x4_on_host(regs, rows);
    }
  for (int r = 0; r < 16; ++r) {
    std::printf("stsm_elem %d", r);
    for (int c = 0; c < 64; ++c) {
      const int id = chunk[std::size_t(64 * r + c)];
      if (id == 0xFFFF) std::printf(" -");
      else std::printf(" %d:%d", id / 128, id % 128);
    }
    std::printf("\n");
  }
}

// ---- swap-AB's transposed store ----

// As chapter 11's prepare_swap_ab_with passes it: the kernel's product is Cᵀ (N × M: rows of B, rows
// of A), stored through CollectiveEpilogueStrided with C's layout transposed, (r, q) at C[q·N + r]:
// to_underlying_arguments(C, n, m, 1, n). The tile of Cᵀ: 128 rows (two consumer warpgroups), 16
// columns (SwapAB16Cfg); M = 16 tokens, N = 256.
struct SwapTile {
  using BM = _128;
  using BN = _16;
  static constexpr int kWgmmaM = 64;
};

void print_swap() {
  constexpr int M = 16, N = 256;
  using Epilogue = CollectiveEpilogueStrided<SwapTile, float>;
  std::vector<float> c(std::size_t(M) * N, -1.0f);
  const auto params = Epilogue::to_underlying_arguments(c.data(), N, M, 1, N);
  std::printf("swap %d %d %d %d %lld %lld\n", M, N, SwapTile::BM::value, SwapTile::BN::value,
              static_cast<long long>(params.row_stride), static_cast<long long>(params.col_stride));
  constexpr int NAcc = SwapTile::BN::value / 2;
  Epilogue::TensorStorage storage;
  for (int cw = 0; cw < 2; ++cw)
    for (int t = 0; t < 128; ++t) {
      auto acc = make_gmma_accumulators<SwapTile::BN::value>();  // the warpgroup's fragment, ((2,2,BN/8),1,1)
      for (int v = 0; v < NAcc; ++v) acc(v) = float(1000 * (128 * cw + t) + v);
      typename Epilogue::Consumer consumer(params, storage, cw, t);
      consumer.store(acc, 0 * SwapTile::BM::value + SwapTile::kWgmmaM * cw, 0 * SwapTile::BN::value);  // tile (0, 0)
    }
  std::vector<int> where(2 * 128 * NAcc, -1);
  for (int off = 0; off < M * N; ++off)
    if (c[std::size_t(off)] >= 0) {
      const int id = int(c[std::size_t(off)]);
      where[std::size_t((id / 1000) * NAcc + id % 1000)] = off;
    }
  for (int cw = 0; cw < 2; ++cw)
    for (int t = 0; t < 128; ++t) {
      std::printf("swap_store %d %d", cw, t);
      for (int v = 0; v < NAcc; ++v) std::printf(" %d", where[std::size_t((128 * cw + t) * NAcc + v)]);
      std::printf("\n");
    }
}

// ---- Chapter 13: the tiles of every expert in one launch, against a launch per expert ----

void print_grouped() {
  constexpr int kBM = 128, kTilesNG = 2, kGroupBlocks = 6;
  const std::vector<std::int64_t> rows = {300, 0, 130, 40, 520, 90};
  std::vector<std::int64_t> offsets{0};
  for (std::int64_t r : rows) offsets.push_back((offsets.back() + kBM - 1) / kBM * kBM + r);
  std::printf("grouped %zu %d %d %d", rows.size(), kTilesNG, kBM, kGroupBlocks);
  for (std::int64_t r : rows) std::printf(" %lld", static_cast<long long>(r));
  std::printf("\n");
  const auto params = PersistentGroupTileScheduler::contiguous(int(rows.size()), offsets.data(), kBM, kTilesNG, 8, 1, kBM);
  for (int b = 0; b < kGroupBlocks; ++b) {
    PersistentGroupTileScheduler s(params, b, kGroupBlocks);
    int j = 0;
    for (GroupWorkTileInfo w = s.get_current_work(); w.is_valid(); w = s.advance_to_next_work())
      std::printf("gunit %d %d %lld %d %d %d %lld %lld\n", b, j++, static_cast<long long>(w.tile_index), w.group, w.tile.m,
                  w.tile.n, static_cast<long long>(w.row_begin), static_cast<long long>(w.row_end));
  }
  for (std::size_t g = 0; g < rows.size(); ++g) {
    const int tiles_m = int((rows[g] + kBM - 1) / kBM);
    if (tiles_m == 0) continue;
    const GroupedTileScheduler order{tiles_m, kTilesNG, 8 < tiles_m ? 8 : tiles_m};
    const int blocks = int(order.size() < kGroupBlocks ? order.size() : kGroupBlocks);
    for (int b = 0; b < blocks; ++b) {
      PersistentTileScheduler s(PersistentTileScheduler::to_underlying_arguments(order, 1), b, blocks);
      int j = 0;
      for (WorkTileInfo w = s.get_current_work(); w.is_valid(); w = s.advance_to_next_work())
        std::printf("lunit %zu %d %d %d %d\n", g, b, j++, w.tile.m, w.tile.n);
    }
  }
}

// ---- Chapter 13's SwiGLU epilogue: which accumulators it pairs ----

// CollectiveEpilogueSwiGlu multiplies SiLU(value i) by value i + NAcc/2 of each thread (NAcc = N/2 values
// of a 64×N tile): that is the same output only if the C layout puts them in one row, N/2 columns apart.
void print_swiglu() {
  constexpr int N = 256, kValues = N / 2, kHalf = kValues / 2, kThread = 5;
  using CLayout = typename MMA_Traits<SM90_64xNx16_F32BF16BF16_SS<N, GmmaMajor::K, GmmaMajor::K>>::CLayout;
  int pairs = 0;
  for (int t = 0; t < 128; ++t)
    for (int i = 0; i < kHalf; ++i) {
      const int gate = int(CLayout{}(t, i)), up = int(CLayout{}(t, i + kHalf));
      if (gate % 64 == up % 64 && up / 64 == gate / 64 + N / 2) ++pairs;
    }
  std::printf("swiglu %d %d %d %d\n", N, 128, kHalf, pairs);
  std::printf("swiglu_thread %d", kThread);
  for (int i = 0; i < kHalf; ++i) {
    const int gate = int(CLayout{}(kThread, i)), up = int(CLayout{}(kThread, i + kHalf));
    std::printf(" %d:%d,%d,%d", i, gate % 64, gate / 64, up / 64);
  }
  std::printf("\n");
}

}  // namespace

int main() {
  std::printf("# hopper_kernel_dump: the facts tools/diagrams/hopper_kernel_diagrams.py draws (regenerate this\n"
              "# file with the program's output; the CTest plots.hopper_kernel_diagrams_facts compares them)\n");
  print_schedules();
  print_multicast();
  print_accumulators<16>();
  print_stmatrix();
  print_swap();
  print_grouped();
  print_swiglu();
  return 0;
}
