// Chapter 07: fp32 GEMM on the CUDA cores at cuBLAS speed. The ladder from chapter 06's register
// prefetch to a cp.async pipeline (2, 3, 4 stages), warp tiling, swizzled shared tiles and big block
// tiles, every storage order, next to chapter 06's best kernel and cuBLAS.
//
// Build: cmake --build build --target ch07_pipelined_simt
// Run:   build/bin/ch07_pipelined_simt [--sizes 4096,8192] [--layout all] [--csv results.csv]   (--help for all flags)
#include "06_tiled_copy_mma/tiled_copy_mma.cuh"
#include "07_pipelined_simt/pipelined_simt.cuh"
#include "harness/gemm_runner.hpp"

namespace ch07 = mm::ch07;

int main(int argc, char** argv) {
  const mm::GemmChapter chapter{
      .chapter = "07_pipelined_simt",
      .description = "Chapter 07: cp.async pipelines (2-4 stages), warp tiling, swizzled shared memory and "
                     "128x256 block tiles for fp32 on the CUDA cores; any storage order",
      .default_sizes = {{2048, 2048, 2048}, {4096, 4096, 4096}, {8192, 8192, 8192}},
      .layouts = {"RRR", "RCR", "CRR", "CCR"},
  };
  auto kernel = [](const char* name, mm::GemmLaunch<float, float> launch, auto rejects) {
    return mm::GemmKernel<float, float>{.name = name, .dtype = mm::DType::f32, .launch = launch,
                                        .rejects = rejects, .needs = mm::arch::sm80};
  };
  return mm::run_gemm_chapter<float, float>(
      argc, argv, chapter,
      {
          // The step before, measured in the same run.
          {.name = "tiled_prefetch", .dtype = mm::DType::f32, .launch = mm::ch06::launch_tiled_prefetch,
           .rejects = mm::ch06::tiled_rejects},
          kernel("pipelined_s2", ch07::launch_pipelined<ch07::PipelinedCfg<2>>, ch07::pipelined_rejects<ch07::PipelinedCfg<2>>),
          kernel("pipelined_s3", ch07::launch_pipelined<ch07::PipelinedCfg<3>>, ch07::pipelined_rejects<ch07::PipelinedCfg<3>>),
          kernel("pipelined_s4", ch07::launch_pipelined<ch07::PipelinedCfg<4>>, ch07::pipelined_rejects<ch07::PipelinedCfg<4>>),
          kernel("warp_tiled", ch07::launch_pipelined<ch07::WarpTiledCfg>, ch07::pipelined_rejects<ch07::WarpTiledCfg>),
          kernel("swizzled", ch07::launch_pipelined<ch07::SwizzledCfg>, ch07::pipelined_rejects<ch07::SwizzledCfg>),
          kernel("fragment_pipelined", ch07::launch_pipelined<ch07::FragmentPipelinedCfg>,
                 ch07::pipelined_rejects<ch07::FragmentPipelinedCfg>),
          kernel("deep_k", ch07::launch_pipelined<ch07::DeepKCfg>, ch07::pipelined_rejects<ch07::DeepKCfg>),
          kernel("big_tile", ch07::launch_pipelined<ch07::BigTileCfg>, ch07::pipelined_rejects<ch07::BigTileCfg>),
      });
}
