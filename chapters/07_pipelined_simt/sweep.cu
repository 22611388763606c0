// Chapter 07's tuning sweep: the kernel at other block tiles, K depths and stage counts, with and
// without the fragment pipeline ("_fp"), to find the point the chapter's last step uses. Not built by default (each point is four more kernel
// instantiations): configure with -DMM_CH07_SWEEP=ON.
//
// Build: cmake -B build -DMM_CH07_SWEEP=ON && cmake --build build --target ch07_sweep
// Run:   build/bin/ch07_sweep --sizes 4096,8192 --layout RRR,RCR --no-check
#include "07_pipelined_simt/pipelined_simt.cuh"
#include "harness/gemm_runner.hpp"

namespace ch07 = mm::ch07;

// (BM,BN,BK,stages, fragment pipeline): 16×16 warp-numbered threads; RunsM×RunsN runs of 4 per
// thread; one block per SM when a thread owns 128 accumulators, two when it owns 64.
template <int BM, int BN, int BK, int S, bool kFragmentPipeline>
using Point = ch07::Config<BM, BN, BK, S, ch07::Warp16x16, BM / 64, BN / 64, ch07::Smem::padded,
                           (BM / 64) * (BN / 64) >= 8 ? 1 : 2, kFragmentPipeline>;

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
          point<Point<128, 128, 16, 3, false>>("128x128x16_s3"),
          point<Point<128, 128, 16, 3, true>>("128x128x16_s3_fp"),
          point<Point<128, 128, 8, 4, true>>("128x128x8_s4_fp"),
          point<Point<128, 256, 8, 3, false>>("128x256x8_s3"),
          point<Point<128, 256, 8, 3, true>>("128x256x8_s3_fp"),
          point<Point<128, 256, 16, 4, true>>("128x256x16_s4_fp"),
          point<Point<256, 128, 8, 3, false>>("256x128x8_s3"),
          point<Point<256, 128, 8, 3, true>>("256x128x8_s3_fp"),
          point<Point<256, 128, 16, 3, true>>("256x128x16_s3_fp"),
          point<Point<256, 128, 16, 4, false>>("256x128x16_s4"),
          point<Point<256, 128, 16, 4, true>>("256x128x16_s4_fp"),
      });
}
