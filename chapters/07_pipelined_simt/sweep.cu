// Chapter 07's tuning sweep: deep_k, the chapter's best kernel, next to the same kernel with one
// choice changed (stages, K depth, fragment pipeline, thread numbering, vector type, L2 prefetch hint,
// block tile), RRR and RCR: the evidence behind "Choosing the configuration" in the README. Not built by default (each point is four more kernel
// instantiations): configure with -DMM_CH07_SWEEP=ON.
//
// Build: cmake -B build -DMM_CH07_SWEEP=ON && cmake --build build --target ch07_sweep
// Run:   build/bin/ch07_sweep --sizes 4096,8192 --layout RRR,RCR --no-check
#include "07_pipelined_simt/pipelined_simt.cuh"
#include "harness/gemm_runner.hpp"

namespace ch07 = mm::ch07;

// (BM,BN,BK,stages, fragment pipeline): 16×16 warp-numbered threads; RunsM×RunsN runs of 4 per
// thread; one block per SM when a thread owns 128 accumulators, two when it owns 64.
template <int BM, int BN, int BK, int S, bool kFragmentPipeline, class Threads = ch07::Warp16x16,
          bool kL2Prefetch = false, class FragVec = float4>
using Point = ch07::Config<BM, BN, BK, S, Threads, BM / 64, BN / 64, ch07::Smem::padded,
                           (BM / 64) * (BN / 64) >= 8 ? 1 : 2, kFragmentPipeline, FragVec, kL2Prefetch>;

// RRR and RCR only (a row-major A): half the instantiations of the chapter's kernels.
template <class Cfg>
mm::GemmKernel<float, float> point(const char* name) {
  return {.name = name, .dtype = mm::DType::f32, .launch = ch07::launch_pipelined<Cfg, true>,
          .rejects = [](const mm::GemmProblem& p) {
            return p.a == mm::Order::row ? ch07::pipelined_rejects<Cfg>(p) : std::string("the sweep takes RRR and RCR");
          },
          .needs = mm::arch::sm80};
}

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
          point<Point<128, 128, 16, 3, true, ch07::Plain16x16>>("deep_k"),
          point<Point<128, 128, 16, 4, true, ch07::Plain16x16>>("stages_4"),
          point<Point<128, 128, 8, 3, true, ch07::Plain16x16>>("bk_8"),
          point<Point<128, 128, 32, 3, true, ch07::Plain16x16>>("bk_32"),
          point<Point<128, 128, 16, 3, false, ch07::Plain16x16>>("no_fragment_pipeline"),
          point<Point<128, 128, 16, 3, true, ch07::Warp16x16>>("warp_numbering"),
          point<Point<128, 128, 16, 3, true, ch07::Plain16x16, false, mm::uint128_t>>("uint128_fragments"),
          point<Point<128, 128, 16, 3, true, ch07::Plain16x16, true>>("l2_prefetch_128b"),
          point<Point<128, 256, 8, 3, true, ch07::Plain16x16>>("tile_128x256x8_s3"),
          point<Point<256, 128, 16, 4, true, ch07::Plain16x16>>("tile_256x128x16_s4"),
      });
}
