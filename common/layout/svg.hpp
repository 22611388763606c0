// SVG pictures of layouts and of thread-value maps (host only), for the docs.
//
//   svg_layout(os, layout)                       cells numbered and coloured by index
//   svg_layout(os, layout, [](int i) { return i % 32; })   coloured by bank
//   svg_thread_partition(os, M, N, thr, title)   which thread owns each element (local_partition)
//   svg_thread_highlight(os, M, N, thr, tid, t)  the elements of one thread, on a large tile
//   svg_tiled_copy(os, tiled_copy)               which thread moves which element (T#/V#)
//   svg_tiled_mma(os, tiled_mma, M, N, K)        the A, B and C maps of a TiledMMA
//   svg_mma_atom(os, Op{}, 'A')                  one operand of an MMA atom, as the PTX ISA draws it
#pragma once

#include <algorithm>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "layout/copy.hpp"
#include "layout/mma.hpp"
#include "layout/print.hpp"

namespace mm {

namespace detail {
// Concatenates strings by appending. (Not `"T" + std::to_string(t)`: g++ 12 flags that
// literal-plus-temporary with a false -Wrestrict warning.)
template <class... S>
std::string svg_cat(S const&... parts) {
  std::string r;
  ((r += parts), ...);
  return r;
}
// A pastel colour per key; `n` keys spread around the colour wheel.
inline std::string svg_colour(int key, int n) {
  n = n < 1 ? 1 : n;
  int k = ((key % n) + n) % n;
  int hue = (k * 360 / n + (k % 2) * (180 / n)) % 360;
  return svg_cat("hsl(", std::to_string(hue), ",70%,80%)");
}
inline std::string svg_escape(std::string s) {
  std::string r;
  for (char c : s) {
    if (c == '<') r += "&lt;";
    else if (c == '>') r += "&gt;";
    else if (c == '&') r += "&amp;";
    else r += c;
  }
  return r;
}

// One grid of M x N cells at (x0, y0): label(m,n) and colour key(m,n).
struct SvgGrid {
  int M, N;
  std::function<std::string(int, int)> label;
  std::function<int(int, int)> key;
  int num_keys;
  std::string title;
};
// Wide enough for the cells and for the title (14px monospace: about 8.5px a character).
inline int svg_grid_width(SvgGrid const& g, int cw) {
  return std::max(30 + g.N * cw, int(g.title.size()) * 17 / 2 + 10);
}
inline int svg_grid_height(SvgGrid const& g, int ch) { return 40 + g.M * ch; }
inline void svg_draw_grid(std::ostream& os, SvgGrid const& g, int x0, int y0, int cw, int ch) {
  os << "<text x=\"" << x0 << "\" y=\"" << y0 + 14 << "\" font-size=\"14\">" << svg_escape(g.title) << "</text>\n";
  int gx = x0 + 24, gy = y0 + 34;
  for (int n = 0; n < g.N; ++n)
    os << "<text x=\"" << gx + n * cw + cw / 2 << "\" y=\"" << gy - 4 << "\" font-size=\"9\" text-anchor=\"middle\" fill=\"#666\">" << n << "</text>\n";
  for (int m = 0; m < g.M; ++m) {
    os << "<text x=\"" << gx - 4 << "\" y=\"" << gy + m * ch + ch / 2 + 3 << "\" font-size=\"9\" text-anchor=\"end\" fill=\"#666\">" << m << "</text>\n";
    for (int n = 0; n < g.N; ++n) {
      int x = gx + n * cw, y = gy + m * ch;
      os << "<rect x=\"" << x << "\" y=\"" << y << "\" width=\"" << cw << "\" height=\"" << ch << "\" fill=\""
         << svg_colour(g.key(m, n), g.num_keys) << "\" stroke=\"#333\" stroke-width=\"0.5\"/>\n";
      os << "<text x=\"" << x + cw / 2 << "\" y=\"" << y + ch / 2 + 4 << "\" font-size=\"" << (cw < 30 ? 8 : 10)
         << "\" text-anchor=\"middle\">" << svg_escape(g.label(m, n)) << "</text>\n";
    }
  }
}
inline void svg_write(std::ostream& os, std::vector<SvgGrid> const& grids, int cw, int ch) {
  int W = 10, H = 0;
  for (auto const& g : grids) {
    W += svg_grid_width(g, cw) + 20;
    H = std::max(H, svg_grid_height(g, ch));
  }
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H + 10
     << "\" font-family=\"monospace\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  int x = 10;
  for (auto const& g : grids) {
    svg_draw_grid(os, g, x, 5, cw, ch);
    x += svg_grid_width(g, cw) + 20;
  }
  os << "</svg>\n";
}
// For every thread, which (thread, value) owns each element of a col-major M x N tile.
template <class PartitionFn>
std::vector<std::pair<int, int>> owner_map(int M, int N, int threads, PartitionFn&& partition) {
  std::vector<int> buf(M * N);
  std::vector<std::pair<int, int>> owner(M * N, {-1, -1});
  auto t = make_tensor(buf.data(), make_layout(make_shape(M, N)));
  for (int tid = 0; tid < threads; ++tid) {
    auto part = partition(tid, t);
    for (int v = 0; v < int(size(part)); ++v) owner[&part(v) - buf.data()] = {tid, v};
  }
  return owner;
}
}  // namespace detail

/// Writes an SVG of a rank-1 or rank-2 layout: cell (m, n) shows layout(m, n); the colour
/// is chosen by `colour_key(index)` (default: the index itself).
template <class L>
void svg_layout(std::ostream& os, L const& layout, std::function<int(int)> colour_key = {}, int num_colours = 0,
                std::string const& title = "") {
  auto l2 = [&] {
    if constexpr (!is_tuple_v<decltype(layout.shape())> || rank_v<decltype(layout.shape())> == 1)
      return make_layout(make_layout(size(layout), _1{}), Layout<_1, _0>{});
    else
      return layout;
  }();
  auto f = [&](int m, int n) {
    if constexpr (!is_tuple_v<decltype(layout.shape())> || rank_v<decltype(layout.shape())> == 1) return int(layout(m));
    else return int(layout(m, n));
  };
  int M = int(size<0>(l2)), N = int(size<1>(l2));
  if (!colour_key) colour_key = [](int i) { return i; };
  if (num_colours == 0) num_colours = std::max(1, int(cosize(layout)));
  detail::SvgGrid g{M, N, [&](int m, int n) { return std::to_string(f(m, n)); },
                    [&](int m, int n) { return colour_key(f(m, n)); }, num_colours,
                    title.empty() ? to_string(layout) : title};
  int cw = std::max(22, 8 * int(std::to_string(int(cosize(layout))).size()) + 6);
  detail::svg_write(os, {g}, cw, 20);
}

/// Writes an SVG of which thread owns each element of a `tile` of shape (M, N) when it is
/// partitioned by `local_partition(tile, thr_layout, tid)`: cells show the thread, colour by warp.
template <class TS, class TD>
void svg_thread_partition(std::ostream& os, int M, int N, Layout<TS, TD> const& thr_layout, std::string const& title) {
  auto owner = detail::owner_map(M, N, int(size(thr_layout)),
                                 [&](int tid, auto const& t) { return local_partition(t, thr_layout, tid); });
  detail::SvgGrid g{M, N, [&](int m, int n) { return std::to_string(owner[m + M * n].first); },
                    [&](int m, int n) { return owner[m + M * n].first / 32; },
                    std::max(1, int(size(thr_layout)) / 32), title};
  detail::svg_write(os, {g}, 24, 18);
}

/// Writes an SVG of the elements that one thread `tid` owns when a (M, N) tile is partitioned
/// by `local_partition(tile, thr_layout, tid)`: its cells are coloured by value index,
/// every other cell is grey. Lines mark the tiles of the thread layout's
/// shape. Small cells and no per-cell text, so that a large tile (128x128) stays a small file.
template <class TS, class TD>
void svg_thread_highlight(std::ostream& os, int M, int N, Layout<TS, TD> const& thr_layout, int tid,
                          std::string const& title, int cell = 8) {
  auto owner = detail::owner_map(M, N, int(size(thr_layout)),
                                 [&](int t, auto const& x) { return local_partition(x, thr_layout, t); });
  int TM = int(size<0>(thr_layout)), TN = int(size<1>(thr_layout));
  int gx = 34, gy = 44, W = std::max(gx + N * cell, int(title.size()) * 17 / 2 + 10) + 10, H = gy + M * cell + 10;
  int values = 0;
  for (auto const& o : owner) values += o.first == tid;
  os << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H
     << "\" font-family=\"monospace\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  os << "<text x=\"10\" y=\"19\" font-size=\"14\">" << detail::svg_escape(title) << "</text>\n";
  os << "<defs><pattern id=\"cell\" x=\"" << gx << "\" y=\"" << gy << "\" width=\"" << cell << "\" height=\"" << cell
     << "\" patternUnits=\"userSpaceOnUse\"><rect width=\"" << cell << "\" height=\"" << cell
     << "\" fill=\"#eee\" stroke=\"#ccc\" stroke-width=\"0.5\"/></pattern></defs>\n";
  os << "<rect x=\"" << gx << "\" y=\"" << gy << "\" width=\"" << N * cell << "\" height=\"" << M * cell
     << "\" fill=\"url(#cell)\"/>\n";
  for (int m = 0; m <= M; m += TM)
    os << "<line x1=\"" << gx << "\" y1=\"" << gy + m * cell << "\" x2=\"" << gx + N * cell << "\" y2=\"" << gy + m * cell
       << "\" stroke=\"#888\" stroke-width=\"1\"/>\n";
  for (int n = 0; n <= N; n += TN)
    os << "<line x1=\"" << gx + n * cell << "\" y1=\"" << gy << "\" x2=\"" << gx + n * cell << "\" y2=\"" << gy + M * cell
       << "\" stroke=\"#888\" stroke-width=\"1\"/>\n";
  for (int m = 0; m < M; m += TM)
    os << "<text x=\"" << gx - 4 << "\" y=\"" << gy + m * cell + 9 << "\" font-size=\"9\" text-anchor=\"end\" fill=\"#666\">" << m
       << "</text>\n";
  for (int n = 0; n < N; n += TN)
    os << "<text x=\"" << gx + n * cell << "\" y=\"" << gy - 4 << "\" font-size=\"9\" fill=\"#666\">" << n << "</text>\n";
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < M; ++m) {
      auto o = owner[m + M * n];
      if (o.first != tid) continue;
      os << "<rect x=\"" << gx + n * cell << "\" y=\"" << gy + m * cell << "\" width=\"" << cell << "\" height=\"" << cell
         << "\" fill=\"" << detail::svg_colour(o.second, std::max(1, values)) << "\" stroke=\"#333\" stroke-width=\"0.5\"/>\n";
    }
  os << "</svg>\n";
}

/// Writes the thread-value map of a TiledCopy over one tile: cell (m, n) shows `T<t>`
/// `V<v>`: thread t moves it as its value v. Colour by thread.
template <class A, class LTV, class TMN, class G>
void svg_tiled_copy(std::ostream& os, TiledCopy<A, LTV, TMN, G> const& tc, std::string const& title = "") {
  int M = int(get<0>(tc.tiler())), N = int(get<1>(tc.tiler()));
  int T = int(size(tc));
  auto owner = detail::owner_map(M, N, T, [&](int tid, auto const& t) { return tc.get_slice(tid).partition_S(t); });
  detail::SvgGrid g{M, N,
                    [&](int m, int n) {
                      auto o = owner[m + M * n];
                      return detail::svg_cat("T", std::to_string(o.first), "V", std::to_string(o.second));
                    },
                    [&](int m, int n) { return owner[m + M * n].first; }, std::min(T, 16),
                    title.empty() ? "TiledCopy: thread T, value V" : title};
  detail::svg_write(os, {g}, 44, 20);
}

/// Writes the A (M x K), B (N x K) and C (M x N) thread-value maps of a TiledMMA: which
/// thread reads each element of A and B and accumulates each element of C.
template <class At, class AL, class P>
void svg_tiled_mma(std::ostream& os, TiledMMA<At, AL, P> const& mma, int M, int N, int K, std::string const& title = "") {
  int T = int(size(mma));
  auto label = [](std::vector<std::pair<int, int>> const& own, int rows) {
    return [&own, rows](int m, int n) {
      auto o = own[m + rows * n];
      return detail::svg_cat("T", std::to_string(o.first));
    };
  };
  // A and B elements are read by several threads: show the first owner.
  auto first_owner = [&](int R, int Cc, auto part) {
    std::vector<int> buf(R * Cc);
    std::vector<std::pair<int, int>> own(R * Cc, {-1, -1});
    auto t = make_tensor(buf.data(), make_layout(make_shape(R, Cc)));
    for (int tid = T - 1; tid >= 0; --tid) {
      auto p = part(tid, t);
      for (int v = 0; v < int(size(p)); ++v) own[&p(v) - buf.data()] = {tid, v};
    }
    return own;
  };
  auto oa = first_owner(M, K, [&](int tid, auto const& t) { return mma.get_slice(tid).partition_A(t); });
  auto ob = first_owner(N, K, [&](int tid, auto const& t) { return mma.get_slice(tid).partition_B(t); });
  auto oc = first_owner(M, N, [&](int tid, auto const& t) { return mma.get_slice(tid).partition_C(t); });
  int nc = std::min(T, 16);
  detail::SvgGrid ga{M, K, label(oa, M), [&](int m, int n) { return oa[m + M * n].first; }, nc, "A (M,K): first reader"};
  detail::SvgGrid gb{N, K, label(ob, N), [&](int m, int n) { return ob[m + N * n].first; }, nc, "B (N,K): first reader"};
  detail::SvgGrid gc{M, N, label(oc, M), [&](int m, int n) { return oc[m + M * n].first; }, nc,
                     title.empty() ? "C (M,N): accumulating thread" : title};
  detail::svg_write(os, {ga, gb, gc}, 30, 20);
}

/// Writes one operand of an MMA atom (`which`: 'A', 'B' or 'C') from its traits' TV layout, drawn
/// as the PTX ISA's fragment figures draw it: A as M rows × K columns, B as K rows × N columns, C as
/// M × N. Cell (row, col) shows `T<t>V<v>`: lane t holds the element as its value v (a_v, b_v or
/// c_v of the ISA); the colour is the lane's. The cells are written row by row.
template <class Op>
void svg_mma_atom(std::ostream& os, Op const&, char which, std::string const& title = "") {
  using Tr = MMA_Traits<Op>;
  using MNK = typename Tr::Shape_MNK;
  int M = int(size(get<0>(MNK{}))), N = int(size(get<1>(MNK{}))), K = int(size(get<2>(MNK{})));
  int rows = which == 'A' ? M : which == 'B' ? K : M;
  int cols = which == 'A' ? K : N;
  std::vector<std::pair<int, int>> owner(rows * cols, {-1, -1});
  auto fill = [&](auto tv) {
    int T = int(size<0>(tv));
    for (int t = 0; t < T; ++t)
      for (int v = 0; v < int(size<1>(tv)); ++v) {
        int idx = int(tv(t, v));
        int r = 0, c = 0;
        if (which == 'A') r = idx % M, c = idx / M;       // index m + M·k
        else if (which == 'B') r = idx / N, c = idx % N;  // index n + N·k, drawn as (k, n)
        else r = idx % M, c = idx / M;                    // index m + M·n
        owner[r * cols + c] = {t, v};
      }
  };
  if (which == 'A') fill(typename Tr::ALayout{});
  else if (which == 'B') fill(typename Tr::BLayout{});
  else fill(typename Tr::CLayout{});
  std::string shape = which == 'B' ? "(K,N)" : which == 'A' ? "(M,K)" : "(M,N)";
  detail::SvgGrid g{rows, cols,
                    [&](int r, int c) {
                      auto o = owner[r * cols + c];
                      return detail::svg_cat("T", std::to_string(o.first), "V", std::to_string(o.second));
                    },
                    [&](int r, int c) { return owner[r * cols + c].first; }, size_v<typename Tr::ThrID>,
                    title.empty() ? detail::svg_cat(std::string(1, which), " ", shape, ": lane T holds it as its value V") : title};
  detail::svg_write(os, {g}, 44, 20);
}

}  // namespace mm
