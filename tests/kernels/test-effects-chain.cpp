/* gst-zerocopy: point effects of a chain of steps in one pass
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * zc::effects_chain_cpu() must write what the steps write one after the
 * other through the per-block code (convert_cpu_reference()): the first
 * step from the source, each next one from what the step before wrote.
 * Every format, 1 to kMaxEffectSteps random steps, odd sizes, padded and
 * misaligned rows, several thread counts, full and limited range, into
 * another frame and in place: byte for byte, padding left alone. And it
 * refuses what is not a chain of point effects on one format and size.
 */
#include "fast-route-check.h"

using zc::PixFmt;
using namespace zc_test;

static int
pick(int lo, int hi)
{
  return std::uniform_int_distribution<int>(lo, hi)(g_rng);
}

/* One step as a zcfilter of a chain sets it: one to three effects, each a
 * random value (the ends of the ranges included now and then). */
static zc::ConvertParams
random_step()
{
  zc::ConvertParams p;
  const int n = pick(1, 3);
  for (int i = 0; i < n; i++) {
    const bool edge = pick(0, 5) == 0;
    switch (pick(0, 6)) {
      case 0:
        p.brightness = edge ? (pick(0, 1) ? 1.0f : -1.0f) : uniform(-0.5f, 0.5f);
        break;
      case 1:
        p.contrast = edge ? 2.0f * pick(0, 1) : uniform(0.3f, 1.8f);
        break;
      case 2:
        p.saturation = edge ? 2.0f * pick(0, 1) : uniform(0, 2);
        break;
      case 3:
        p.hue = edge ? (pick(0, 1) ? 1.0f : -1.0f) : uniform(-1, 1);
        break;
      case 4:
        p.gamma = edge ? (pick(0, 1) ? 10.0f : 0.01f)
                       : (pick(0, 1) ? uniform(0.3f, 1) : uniform(1, 3));
        break;
      case 5:
        p.grayscale = true;
        break;
      default:
        p.invert = true;
        break;
    }
  }
  return p;
}

/* a and b hold the same bytes, padding included */
static bool
same_bytes(const std::string &name, const HostFrame &a, const HostFrame &b)
{
  for (int i = 0; i < zc::pixfmt_n_planes(a.desc.fmt); i++) {
    const size_t n = a.plane_bytes(i);
    const uint8_t *x = a.desc.planes[i], *y = b.desc.planes[i];
    for (size_t k = 0; k < n; k++) {
      if (x[k] != y[k]) {
        const size_t stride = a.desc.strides[i];
        return check(false, "%s: plane %d row %zu byte %zu: chain %u, steps %u",
                     name.c_str(), i, k / stride, k % stride, x[k], y[k]);
      }
    }
  }
  return check(true, "%s", name.c_str());
}

static void
copy_frame(const HostFrame &from, HostFrame *to)
{
  for (int i = 0; i < zc::pixfmt_n_planes(from.desc.fmt); i++)
    std::memcpy(to->desc.planes[i], from.desc.planes[i], from.plane_bytes(i));
}

static const Size sizes[] = {
  {33, 17, 0, 0, 1}, {64, 48, 12, 0, 3}, {37, 5, 5, 1, 2},
  {1, 1, 0, 0, 1},   {2, 3, 3, 1, 0},    {640, 40, 4, 2, 0},
};

/* steps[0..n) on a random frame of f, two ways against the reference:
 * into another frame (pre-filled with random bytes: the padding must stay)
 * and in place. */
static void
check_chain(const std::string &what, PixFmt f, const Size &z, int range,
            const zc::ConvertParams *steps, int n)
{
  const bool sfull = range == 1, dfull = range >= 1;
  const zc::Matrix m = range == 2 ? zc::Matrix::BT601 : zc::Matrix::BT709;
  const std::string name = what + ": " + zc::pixfmt_name(f) + " "
                           + std::to_string(z.w) + "x" + std::to_string(z.h)
                           + " range " + std::to_string(range) + ", "
                           + std::to_string(n) + " steps, threads "
                           + std::to_string(z.threads);
  HostFrame src(f, z.w, z.h, z.pad, z.misalign, m, sfull);
  src.randomize();
  HostFrame dst(f, z.w, z.h, z.pad, z.misalign, m, dfull);
  dst.randomize();

  /* the steps one after the other, each into a frame holding what the
   * step before wrote (so the padding is carried as the chain leaves it) */
  HostFrame ref(f, z.w, z.h, z.pad, z.misalign, m, dfull);
  HostFrame next(f, z.w, z.h, z.pad, z.misalign, m, dfull);
  copy_frame(dst, &ref);
  bool ok = zc::convert_cpu_reference(src.desc, ref.desc, steps[0], 1);
  for (int i = 1; i < n && ok; i++) {
    copy_frame(ref, &next);
    ok = zc::convert_cpu_reference(ref.desc, next.desc, steps[i], 1);
    copy_frame(next, &ref);
  }
  if (!check(ok, "%s: the reference refused a step", name.c_str()))
    return;

  check(zc::effects_chain_cpu(src.desc, dst.desc, steps, n, z.threads),
        "%s: effects_chain_cpu() refused the chain", name.c_str());
  same_bytes(name + " (into another frame)", dst, ref);

  /* in place: one frame, source and destination */
  HostFrame inplace(f, z.w, z.h, z.pad, z.misalign, m, dfull);
  inplace.randomize();
  HostFrame ref2(f, z.w, z.h, z.pad, z.misalign, m, dfull);
  copy_frame(inplace, &ref2);
  ok = true;
  for (int i = 0; i < n && ok; i++) {
    copy_frame(ref2, &next);
    ok = zc::convert_cpu_reference(ref2.desc, next.desc, steps[i], 1);
    copy_frame(next, &ref2);
  }
  if (!check(ok, "%s: the reference refused a step in place", name.c_str()))
    return;
  check(zc::effects_chain_cpu(inplace.desc, inplace.desc, steps, n,
                              z.threads),
        "%s: effects_chain_cpu() refused the chain in place", name.c_str());
  same_bytes(name + " (in place)", inplace, ref2);
}

/* What a chain of zcfilters sets most: three steps of one effect each */
static void
check_three_filters()
{
  zc::ConvertParams steps[3];
  steps[0].invert = true;
  steps[1].contrast = 1.2f;
  steps[2].gamma = 1.5f;
  for (PixFmt f : zc::kAllPixFmts)
    for (const Size &z : sizes)
      check_chain("invert, contrast, gamma", f, z, 0, steps, 3);
}

/* Steps that only invert: an odd count flips, an even count copies */
static void
check_inverts_alone()
{
  zc::ConvertParams steps[4];
  for (auto &st : steps)
    st.invert = true;
  for (int n = 1; n <= 4; n++)
    for (PixFmt f : zc::kAllPixFmts)
      for (const Size &z : sizes)
        check_chain(std::to_string(n) + " inverts", f, z, 0, steps, n);
}

static void
check_random_chains()
{
  for (int round = 0; round < 6; round++) {
    for (PixFmt f : zc::kAllPixFmts) {
      const int n_ranges = is_yuv(f) ? 3 : 1;
      for (const Size &z : sizes) {
        for (int r = 0; r < n_ranges; r++) {
          zc::ConvertParams steps[zc::kMaxEffectSteps];
          const int n = round == 0 ? zc::kMaxEffectSteps
                                   : pick(1, zc::kMaxEffectSteps);
          for (int i = 0; i < n; i++)
            steps[i] = random_step();
          check_chain("random " + std::to_string(round), f, z, r, steps, n);
        }
      }
    }
  }
}

/* Not a chain of point effects on one format and size: refused, and the
 * destination left as it was. */
static void
check_refused()
{
  HostFrame src(PixFmt::RGBA, 16, 8);
  src.randomize();
  HostFrame dst(PixFmt::RGBA, 16, 8);
  dst.randomize();
  HostFrame bgra(PixFmt::BGRA, 16, 8);
  HostFrame small(PixFmt::RGBA, 8, 8);
  const std::vector<uint8_t> before = dst.data;

  zc::ConvertParams fx;
  fx.invert = true;
  zc::ConvertParams steps[zc::kMaxEffectSteps + 1];
  for (auto &s : steps)
    s = fx;

  struct Case
  {
    const char *name;
    const zc::FrameDesc *s, *d;
    int n;
    zc::ConvertParams change;
    bool change_second;
  };
  zc::ConvertParams none, crop = fx, rect = fx, flip = fx;
  crop.crop_left = 2;
  rect.dst_w = 8;
  rect.dst_h = 8;
  flip.orientation = zc::Orientation::FlipH;
  const Case cases[] = {
    {"no step", &src.desc, &dst.desc, 0, fx, false},
    {"too many steps", &src.desc, &dst.desc, zc::kMaxEffectSteps + 1, fx,
     false},
    {"a step without effects", &src.desc, &dst.desc, 2, none, true},
    {"a step that crops", &src.desc, &dst.desc, 2, crop, true},
    {"a step into a rectangle", &src.desc, &dst.desc, 1, rect, false},
    {"a step that flips", &src.desc, &dst.desc, 2, flip, true},
    {"a conversion", &src.desc, &bgra.desc, 1, fx, false},
    {"a scaling", &src.desc, &small.desc, 1, fx, false},
  };
  for (const Case &c : cases) {
    zc::ConvertParams s[zc::kMaxEffectSteps + 1];
    for (int i = 0; i <= zc::kMaxEffectSteps; i++)
      s[i] = steps[i];
    s[c.change_second ? 1 : 0] = c.change;
    check(!zc::effects_chain_cpu(*c.s, *c.d, s, c.n, 1), "%s: refused",
          c.name);
  }
  check(!zc::effects_chain_cpu(src.desc, dst.desc, nullptr, 1, 1),
        "no steps array: refused");
  check(dst.data == before, "a refused chain writes nothing");
}

static int
cpu_tests()
{
  check_three_filters();
  check_inverts_alone();
  check_random_chains();
  check_refused();
  return 0;
}

int
main(int argc, char **argv)
{
  return run_main(argc, argv, 4647, cpu_tests, [] { return 77; });
}
