// Chapter 07's tuning sweep: deep_k, the chapter's best step, next to the same kernel with one choice
// changed (stages, K depth, register pipeline, thread numbering, vector type, L2 prefetch hint, block
// tile), RRR and RCR: the evidence behind "Choosing the configuration" in the README. Each point is a
// named configuration, deep_k's plus its one change. Not built by default (each point is two more
// kernel instantiations): configure with -DMM_CH07_SWEEP=ON.
//
// Build: cmake -B build -DMM_CH07_SWEEP=ON && cmake --build build --target ch07_sweep
// Run:   build/bin/ch07_sweep --sizes 4096,8192 --layout RRR,RCR --no-check
#include "07_pipelined_simt/fragment_pipelined.cuh"
#include "07_pipelined_simt/pipelined.cuh"
#include "harness/gemm_runner.hpp"

namespace ch07 = mm::ch07;

namespace {

// deep_k's configuration (fragment_pipelined.cuh) with one choice changed. A tile of 128
// accumulators per thread (8×16) gets one block per SM, as big_tile does.
struct Stages4 : ch07::DeepKCfg {
  static constexpr int kStages = 4;
};
struct Bk8 : ch07::DeepKCfg {
  using BK = mm::_8;
};
struct Bk32 : ch07::DeepKCfg {
  using BK = mm::_32;
};
struct WarpNumbering : ch07::DeepKCfg {
  using ThrLayout = ch07::Warp16x16;
};
struct Uint128Fragments : ch07::DeepKCfg {
  using FragVec = mm::uint128_t;
};
struct L2Prefetch128B : ch07::DeepKCfg {
  static constexpr bool kL2Prefetch = true;
};
struct Tile128x256x8S3 : ch07::DeepKCfg {
  using BN = mm::_256;
  using BK = mm::_8;
  static constexpr int kMinBlocks = 1;
};
struct Tile256x128x16S4 : ch07::DeepKCfg {
  using BM = mm::_256;
  static constexpr int kStages = 4;
  static constexpr int kMinBlocks = 1;
};

// A point: RRR and RCR only (a row-major A), half the instantiations of the chapter's kernels.
template <class Cfg, bool kFragmentPipeline = true>
mm::GemmKernel<float, float> point(const char* name) {
  constexpr auto kOrders = ch07::Orders::row_major_a;
  mm::GemmLaunch<float, float> launch;
  if constexpr (kFragmentPipeline) launch = ch07::launch_fragment_pipelined<Cfg, kOrders>;
  else launch = ch07::launch_pipelined<Cfg, kOrders>;  // the kernel without the register pipeline
  return {.name = name, .dtype = mm::DType::f32, .launch = launch,
          .rejects = [](const mm::GemmProblem& p) {
            return p.a == mm::Order::row ? ch07::pipelined_rejects<Cfg>(p) : std::string("the sweep takes RRR and RCR");
          },
          .needs = mm::arch::sm80};
}

}  // namespace

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "07_pipelined_simt_sweep",
      .description = "Chapter 07 sweep: block tile x K depth x stages of the pipelined fp32 kernel",
      .default_sizes = {{4096, 4096, 4096}},
      .layouts = {"RRR", "RCR"},
  };
  return mm::run_gemm_chapter<float, float>(
      argc, argv, chapter,
      {
          // deep_k, the chapter's best, and one change at a time:
          point<ch07::DeepKCfg>("deep_k"),
          point<Stages4>("stages_4"),
          point<Bk8>("bk_8"),
          point<Bk32>("bk_32"),
          point<ch07::DeepKCfg, false>("no_fragment_pipeline"),  // pipelined.cuh's kernel
          point<WarpNumbering>("warp_numbering"),
          point<Uint128Fragments>("uint128_fragments"),
          point<L2Prefetch128B>("l2_prefetch_128b"),
          point<Tile128x256x8S3>("tile_128x256x8_s3"),
          point<Tile256x128x16S4>("tile_256x128x16_s4"),
      });
}
