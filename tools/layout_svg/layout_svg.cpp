// Writes the SVG pictures used by docs/layouts.md and the chapter READMEs.
// Usage: layout_svg [output_dir]   (default: docs/images; files are named layout_*.svg and mma_*.svg)
// The directory must exist (a mistyped path is an error, exit 2, not a new directory); --help prints
// the usage. tests/tools checks that the pictures it writes are the committed ones, byte for byte.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <string>

#include <sys/stat.h>
#include <unistd.h>

#include "layout/all.hpp"
#include "layout/svg.hpp"

using namespace mm;

namespace {

constexpr const char* usage =
    "Usage: layout_svg [-h|--help] [OUTPUT_DIR]\n"
    "Writes the layout and mma-fragment pictures of docs/layouts.md and the chapter pages (layout_*.svg,\n"
    "mma_*.svg) into OUTPUT_DIR, an existing directory (default: docs/images).\n";

int failures = 0;  // files that could not be written; the exit code is 1 if any

// Opens dir/name for writing, or reports the failure.
std::ofstream open_svg(std::string const& dir, std::string const& name) {
  std::ofstream f(dir + "/" + name);
  if (!f) {
    std::fprintf(stderr, "layout_svg: error: cannot write %s/%s: %s\n", dir.c_str(), name.c_str(), std::strerror(errno));
    ++failures;
  } else {
    std::printf("wrote %s/%s\n", dir.c_str(), name.c_str());
  }
  return f;
}

// The output directory from the command line, or exits: 0 after --help, 2 (one line) on anything else
// that is not an existing, writable directory.
std::string output_dir(int argc, char** argv) {
  std::string dir = "docs/images";
  int given = 0;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::cout << usage;
      std::exit(0);
    }
    if (arg.size() > 1 && arg[0] == '-') {
      std::fprintf(stderr, "layout_svg: error: unknown option '%s' (layout_svg --help)\n", arg.c_str());
      std::exit(2);
    }
    if (++given > 1) {
      std::fprintf(stderr, "layout_svg: error: one output directory, got '%s' and '%s'\n", dir.c_str(), arg.c_str());
      std::exit(2);
    }
    dir = arg;
  }
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0) {
    std::fprintf(stderr, "layout_svg: error: output directory '%s': %s (create it first)\n", dir.c_str(),
                 std::strerror(errno));
    std::exit(2);
  }
  if (!S_ISDIR(st.st_mode)) {
    std::fprintf(stderr, "layout_svg: error: output directory '%s' is not a directory\n", dir.c_str());
    std::exit(2);
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    std::fprintf(stderr, "layout_svg: error: output directory '%s': %s\n", dir.c_str(), std::strerror(errno));
    std::exit(2);
  }
  return dir;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = output_dir(argc, argv);
  auto bank = [](int i) { return i % 32; };

  // Basic layouts: the same 4x2 shape, column-major and row-major, and a nested mode.
  { auto f = open_svg(dir, "layout_col_major_4x2.svg"); svg_layout(f, make_layout(make_shape(_4{}, _2{}))); }
  { auto f = open_svg(dir, "layout_row_major_4x2.svg"); svg_layout(f, make_layout(make_shape(_4{}, _2{}), LayoutRight{})); }
  {
    auto f = open_svg(dir, "layout_nested.svg");
    svg_layout(f, make_layout(make_shape(make_shape(_2{}, _2{}), _3{}), make_stride(make_stride(_1{}, _6{}), _2{})));
  }
  // Tiling: the 2x2 grid of 4x8 tiles of a 8x16 matrix, coloured by tile.
  {
    auto f = open_svg(dir, "layout_zipped_divide.svg");
    auto z = zipped_divide(make_layout(make_shape(_8{}, _16{})), make_shape(_4{}, _8{}));
    svg_layout(f, z, [](int i) { return (i % 8) / 4 + 2 * (i / 64); }, 4,
               std::string("zipped_divide((8,16), (4,8)) = ").append(to_string(z)));
  }
  // Chapter 04: a 32x8 thread layout over a 32x32 tile (each thread owns 4 elements).
  {
    auto f = open_svg(dir, "layout_thread_32x8_over_32x32.svg");
    svg_thread_partition(f, 32, 32, Layout<Shape<_32, _8>>{},
                         "local_partition(tile (32,32), thr (32,8), tid): owning thread, colour = warp");
  }
  // Chapter 04: the row-major 8x32 thread layout of the copy kernels (a warp covers one tile row).
  {
    auto f = open_svg(dir, "layout_thread_8x32_over_32x32.svg");
    svg_thread_partition(f, 32, 32, Layout<Shape<_8, _32>, Stride<_32, _1>>{},
                         "local_partition(tile (32,32), thr (8,32):(32,1), tid): owning thread, colour = warp");
  }
  // Chapter 05: the copy thread layouts over a (BM,BK) = (128,8) tile, for an MN-major and a
  // K-major operand.
  {
    auto f = open_svg(dir, "layout_ch05_copy_thr_32x8_mn_major.svg");
    svg_thread_partition(f, 128, 8, Layout<Shape<_32, _8>, Stride<_1, _32>>{},
                         "local_partition(tile (128,8), thr (32,8):(1,32), tid): owning thread, colour = warp");
  }
  {
    auto f = open_svg(dir, "layout_ch05_copy_thr_32x8_k_major.svg");
    svg_thread_partition(f, 128, 8, Layout<Shape<_32, _8>, Stride<_8, _1>>{},
                         "local_partition(tile (128,8), thr (32,8):(8,1), tid): owning thread, colour = warp");
  }
  // Chapter 05: the 16x16 compute threads over the (128,128) tile of C; thread 18 = (1,2)
  // owns rows 1 + 16i and columns 2 + 16j.
  {
    auto f = open_svg(dir, "layout_ch05_compute_thr_16x16_over_128x128.svg");
    svg_thread_highlight(f, 128, 128, Layout<Shape<_16, _16>, Stride<_16, _1>>{}, 18,
                         "local_partition(tile (128,128), thr (16,16):(16,1), 18): thread 18 = (1,2), its 64 elements");
  }
  // Chapter 05: banks of the (128,8) shared tiles, unpadded and padded by one element per column.
  {
    auto f = open_svg(dir, "layout_ch05_smem_banks_128x8.svg");
    svg_layout(f, make_layout(make_shape(_128{}, _8{}), make_stride(_1{}, _128{})), bank, 32,
               "(128,8):(1,128), colour = bank (index % 32): a tile row lies in one bank");
  }
  {
    auto f = open_svg(dir, "layout_ch05_smem_banks_128x8_padded.svg");
    svg_layout(f, make_layout(make_shape(_128{}, _8{}), make_stride(_1{}, _129{})), bank, 32,
               "(128,8):(1,129), colour = bank (index % 32): padding spreads a tile row over 8 banks");
  }
  // Chapter 04: shared-memory banks (index % 32) of a 32x32 float tile, without and with padding.
  {
    auto f = open_svg(dir, "layout_smem_banks_32x32.svg");
    svg_layout(f, make_layout(make_shape(_32{}, _32{}), make_stride(_1{}, _32{})), bank, 32,
               "(32,32):(1,32), colour = bank (index % 32): a row lies in one bank");
  }
  {
    auto f = open_svg(dir, "layout_smem_banks_32x33.svg");
    svg_layout(f, make_layout(make_shape(_32{}, _32{}), make_stride(_1{}, _33{})), bank, 32,
               "(32,32):(1,33), colour = bank (index % 32): padding spreads a row over all banks");
  }
  // Chapter 07: the same tile row-major with a swizzle instead of padding.
  {
    auto f = open_svg(dir, "layout_smem_banks_swizzle.svg");
    svg_layout(f, composition(Swizzle<5, 0, 5>{}, make_layout(make_shape(_32{}, _32{}), LayoutRight{})), bank, 32,
               "Sw<5,0,5> o (32,32):(32,1), colour = bank: no padding, no conflicts");
  }
  // Chapter 06: TiledCopy thread-value maps (MoYe's 6-thread example, and a 128-bit one).
  {
    auto f = open_svg(dir, "layout_tiled_copy_tv.svg");
    auto tc = make_tiled_copy(Copy_Atom<UniversalCopy<float>, float>{}, Layout<Shape<_2, _3>, Stride<_3, _1>>{},
                              Layout<Shape<_2, _3>, Stride<_1, _2>>{});
    svg_tiled_copy(f, tc, "make_tiled_copy(thr (2,3):(3,1), val (2,3):(1,2)): thread T, value V");
  }
  {
    auto f = open_svg(dir, "layout_tiled_copy_vec128.svg");
    auto tc = make_tiled_copy(Copy_Atom<UniversalCopy<mm::uint128_t>, float>{}, Layout<Shape<_8, _4>>{}, Layout<Shape<_4, _1>>{});
    svg_tiled_copy(f, tc, "make_tiled_copy(128-bit, thr (8,4), val (4,1)): one 16-byte vector per thread per column");
  }
  // Chapter 06: TiledMMA maps (UniversalFMA on a 4x4 thread grid over an 8x8x4 tile).
  {
    auto f = open_svg(dir, "layout_tiled_mma_tv.svg");
    auto mma = make_tiled_mma(UniversalFMA<float>{}, Layout<Shape<_4, _4>>{});
    svg_tiled_mma(f, mma, 8, 8, 4, "C (M,N) of make_tiled_mma(FMA, (4,4)): accumulating thread");
  }
  // Chapter 06: the (128,8) operand copies of chapters/06_tiled_copy_mma, and its MMA permutation
  // drawn at 1/4 scale (a 4x4 thread grid over a 16x16 tile).
  {
    auto f = open_svg(dir, "layout_ch06_tiled_copy_mn_major.svg");
    svg_tiled_copy(f, make_tiled_copy(Copy_Atom<UniversalCopy<mm::uint128_t>, float>{}, Layout<Shape<_32, _8>, Stride<_1, _32>>{},
                                      Layout<Shape<_4, _1>>{}),
                   "row-major B as (N,K): thr (32,8):(1,32), val (4,1): a warp reads 512 contiguous bytes");
  }
  {
    auto f = open_svg(dir, "layout_ch06_tiled_copy_k_major.svg");
    svg_tiled_copy(f, make_tiled_copy(Copy_Atom<UniversalCopy<mm::uint128_t>, float>{}, Layout<Shape<_128, _2>, Stride<_2, _1>>{},
                                      Layout<Shape<_1, _4>>{}),
                   "row-major A as (M,K): thr (128,2):(2,1), val (1,4): a warp reads 16 rows x 32 bytes");
  }
  {
    auto f = open_svg(dir, "layout_ch06_tiled_copy_k_major_strided.svg");
    svg_tiled_copy(f, make_tiled_copy(Copy_Atom<UniversalCopy<mm::uint128_t>, float>{}, Layout<Shape<_128, _2>, Stride<_1, _128>>{},
                                      Layout<Shape<_1, _4>>{}),
                   "uncoalesced: thr (128,2):(1,128), val (1,4): a warp reads 32 rows x 16 bytes");
  }
  {
    auto f = open_svg(dir, "layout_ch06_tiled_mma_plain.svg");
    svg_tiled_mma(f, make_tiled_mma(UniversalFMA<float>{}, Layout<Shape<_4, _4>>{}), 16, 16, 1,
                  "make_tiled_mma(FMA, (4,4)): thread t reads rows t, t+4, t+8, t+12");
  }
  {
    auto f = open_svg(dir, "layout_ch06_tiled_mma_permuted.svg");
    using P = Layout<Shape<_4, _2>, Stride<_2, _1>>;
    svg_tiled_mma(f, make_tiled_mma(UniversalFMA<float>{}, Layout<Shape<_4, _4>>{}, Tile<P, P, Underscore>{}), 16, 16, 1,
                  "with permutation (4,2):(2,1): thread t reads rows 2t, 2t+1, 8+2t, 9+2t");
  }
  // Chapter 08: the mma.sync atoms' fragments, drawn from their traits as the PTX ISA's figures
  // ("Matrix Fragments for mma.m16n8k16 with floating point type", "... mma.m16n8k8" .tf32).
  for (char which : {'A', 'B', 'C'}) {
    std::string w(1, which);
    {
      auto f = open_svg(dir, "mma_m16n8k16_bf16_" + w + ".svg");
      svg_mma_atom(f, SM80_16x8x16_F32BF16BF16F32_TN{}, which,
                   "mma.m16n8k16 bf16, " + w + (which == 'A' ? " (M,K)" : which == 'B' ? " (K,N)" : " (M,N)") +
                       ": lane T holds it as value V");
    }
    {
      auto f = open_svg(dir, "mma_m16n8k8_tf32_" + w + ".svg");
      svg_mma_atom(f, SM80_16x8x8_F32TF32TF32F32_TN{}, which,
                   "mma.m16n8k8 tf32, " + w + (which == 'A' ? " (M,K)" : which == 'B' ? " (K,N)" : " (M,N)") +
                       ": lane T holds it as value V");
    }
  }
  return failures > 0 ? 1 : 0;
}
