/* gst-zerocopy: the frame view of a zckernel kernel
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * Include this from a kernel that the zckernel element runs:
 *
 *   #include <gst/zerocopy/zckernel.cuh>
 *
 *   ZC_KERNEL (process)
 *   {
 *     int x = zc_x (), y = zc_y ();
 *     if (!zc_inside (out, x, y))
 *       return;
 *     ZcRGBA p = zc_read_rgba (in, x, y);
 *     p.r = 255 - p.r;
 *     zc_write_rgba (out, x, y, p);
 *   }
 *
 * zckernel compiles such a file with NVRTC for the GPU it runs on, and puts
 * this header on NVRTC's include path itself; nvcc finds it with
 * -I<prefix>/include/gstreamer-1.0 (for .cubin, .ptx or .fatbin files given
 * to zckernel's location). The full contract is in docs/zckernel.md.
 *
 * The kernel: ZC_KERNEL (name) declares it, extern "C" so that zckernel
 * finds it by that name (its entry property, "process" by default). It gets
 *  - in, out: the input and output frames (ZcFrame). In place (the default
 *    when the input frame is writable) both describe the same memory: each
 *    thread may then read only what it writes. Otherwise out is a separate
 *    frame of the same caps whose previous contents are undefined, and the
 *    kernel writes every sample of it;
 *  - info: the frame's number since the element started, its timestamp
 *    and duration;
 *  - params: the element's params structure, packed as docs/zckernel.md
 *    says (zc_params<T> () reads it as your own struct).
 * One thread per pixel of the picture (width x height), in 2-D blocks of
 * block-width x block-height threads: zc_x (), zc_y () are its pixel.
 *
 * The same header compiles as plain C++ on the host (the types only), so
 * that zckernel and its kernels agree on the layout.
 */
#ifndef GST_ZC_KERNEL_CUH
#define GST_ZC_KERNEL_CUH

/* Changes whenever the layout of the types below changes: part of the key
 * of zckernel's compile cache */
#define ZC_KERNEL_ABI_VERSION 1

/* The most bytes of params a kernel gets */
#define ZC_PARAMS_MAX_BYTES 256

/* Frame formats: the values of GStreamer's GstVideoFormat */
#define ZC_FORMAT_I420 2
#define ZC_FORMAT_YV12 3
#define ZC_FORMAT_YUY2 4
#define ZC_FORMAT_UYVY 5
#define ZC_FORMAT_RGBx 7
#define ZC_FORMAT_BGRx 8
#define ZC_FORMAT_xRGB 9
#define ZC_FORMAT_xBGR 10
#define ZC_FORMAT_RGBA 11
#define ZC_FORMAT_BGRA 12
#define ZC_FORMAT_ARGB 13
#define ZC_FORMAT_ABGR 14
#define ZC_FORMAT_RGB 15
#define ZC_FORMAT_BGR 16
#define ZC_FORMAT_Y42B 18
#define ZC_FORMAT_Y444 20
#define ZC_FORMAT_NV12 23
#define ZC_FORMAT_NV21 24
#define ZC_FORMAT_GRAY8 25
#define ZC_FORMAT_GRAY16_LE 27
#define ZC_FORMAT_I420_10LE 43
#define ZC_FORMAT_P010_10LE 62

/* What the pixel helpers can do with a frame (ZcFrame.family) */
#define ZC_FAMILY_OTHER 0       /* raw planes only (YUY2, 10/16-bit ...) */
#define ZC_FAMILY_RGB 1         /* 8-bit packed R'G'B' (RGBA, BGRx, RGB ...) */
#define ZC_FAMILY_GRAY 2        /* GRAY8 */
#define ZC_FAMILY_YUV 3         /* 8-bit planar and semi-planar Y'CbCr:
                                 * I420, YV12, Y42B, Y444, NV12, NV21 */

/* One plane of a frame */
struct ZcPlane
{
  unsigned char *data;          /* sample (0, 0) of the plane */
  int stride;                   /* bytes from one row to the next */
  int width, height;            /* in samples of this plane */
  int pixel_stride;             /* bytes from one sample to the next */
  int reserved_;
};

/* A frame: its planes and where each component lives */
struct ZcFrame
{
  ZcPlane plane[4];
  int n_planes;
  int format;                   /* ZC_FORMAT_* (GstVideoFormat) */
  int family;                   /* ZC_FAMILY_* */
  int width, height;            /* the picture, in pixels */
  int depth;                    /* bits per component: 8, 10 or 16 */
  int full_range;               /* 1: luma 0..255, 0: 16..235 */
  int chroma_shift_x;           /* chroma subsampling: 1 in 4:2:0 and */
  int chroma_shift_y;           /* 4:2:2 (x), 1 in 4:2:0 (y), else 0 */
  /* Component c (R, G, B, A on R'G'B'; Y, U, V on Y'CbCr; Y on GRAY):
   * its plane and its byte offset in a sample; -1: none. On RGBx-like
   * formats component 3 is the padding byte and has_alpha is 0. */
  signed char comp_plane[4];
  signed char comp_offset[4];
  int has_alpha;
  int reserved_;
};

/* Per frame values, always present */
struct ZcFrameInfo
{
  unsigned long long frame_number;      /* 0 for the first frame after start */
  long long pts;                /* ns; -1 when the buffer has none */
  long long duration;           /* ns; -1 when the buffer has none */
};

/* The params structure, packed (docs/zckernel.md, "Parameters") */
struct ZcParams
{
  alignas (8) unsigned char bytes[ZC_PARAMS_MAX_BYTES];
  unsigned int size;            /* bytes used */
  unsigned int n_fields;
};

#if defined(__CUDACC__) || defined(__CUDACC_RTC__)

#define ZC_KERNEL(name) \
  extern "C" __global__ void name (const ZcFrame in, const ZcFrame out, \
      const ZcFrameInfo info, const ZcParams params)

#define ZC_DEVICE __device__ __forceinline__

/* This thread's pixel */
ZC_DEVICE int zc_x () { return (int) (blockIdx.x * blockDim.x + threadIdx.x); }
ZC_DEVICE int zc_y () { return (int) (blockIdx.y * blockDim.y + threadIdx.y); }

/* Whether pixel (x, y) is in the picture: the grid is rounded up to
 * whole blocks, so the last ones hang over */
ZC_DEVICE bool
zc_inside (const ZcFrame & f, int x, int y)
{
  return x >= 0 && y >= 0 && x < f.width && y < f.height;
}

/* The params as the struct T you declared for them: the fields in the
 * order of the params structure, as docs/zckernel.md packs them */
template < typename T > ZC_DEVICE const T & zc_params (const ZcParams & p)
{
  static_assert (sizeof (T) <= ZC_PARAMS_MAX_BYTES, "params too large");
  return *reinterpret_cast < const T * >(p.bytes);
}

/* The byte of component @c at sample (sx, sy) of its plane (chroma samples
 * are in chroma coordinates) */
ZC_DEVICE unsigned char *
zc_component (const ZcFrame & f, int c, int sx, int sy)
{
  const ZcPlane & p = f.plane[f.comp_plane[c]];
  return p.data + (long long) sy * p.stride + (long long) sx * p.pixel_stride
      + f.comp_offset[c];
}

/* Raw sample (sx, sy) of plane @pl */
ZC_DEVICE unsigned char *
zc_sample (const ZcFrame & f, int pl, int sx, int sy)
{
  const ZcPlane & p = f.plane[pl];
  return p.data + (long long) sy * p.stride + (long long) sx * p.pixel_stride;
}

/* ---- R'G'B' (ZC_FAMILY_RGB) ---- */

struct ZcRGBA
{
  unsigned char r, g, b, a;
};

/* Pixel (x, y) of an R'G'B' frame; a is 255 where the format has none */
ZC_DEVICE ZcRGBA
zc_read_rgba (const ZcFrame & f, int x, int y)
{
  const unsigned char *p = f.plane[0].data + (long long) y * f.plane[0].stride
      + (long long) x * f.plane[0].pixel_stride;
  ZcRGBA v;
  if (f.plane[0].pixel_stride == 4) {
    /* one 4-byte load: on mapped memory every load crosses the bus */
    unsigned int w = *reinterpret_cast < const unsigned int *>(p);
    v.r = (unsigned char) (w >> (8 * f.comp_offset[0]));
    v.g = (unsigned char) (w >> (8 * f.comp_offset[1]));
    v.b = (unsigned char) (w >> (8 * f.comp_offset[2]));
    v.a = f.has_alpha ? (unsigned char) (w >> (8 * f.comp_offset[3])) : 255;
    return v;
  }
  v.r = p[f.comp_offset[0]];
  v.g = p[f.comp_offset[1]];
  v.b = p[f.comp_offset[2]];
  v.a = 255;
  return v;
}

/* Stores pixel (x, y) of an R'G'B' frame; on RGBx-like formats the padding
 * byte gets v.a, as GStreamer's converters fill it (255 from a format
 * without alpha) */
ZC_DEVICE void
zc_write_rgba (const ZcFrame & f, int x, int y, ZcRGBA v)
{
  unsigned char *p = f.plane[0].data + (long long) y * f.plane[0].stride
      + (long long) x * f.plane[0].pixel_stride;
  if (f.plane[0].pixel_stride == 4) {
    /* one 4-byte store (component 3 is alpha or the padding byte) */
    *reinterpret_cast < unsigned int *>(p) =
        ((unsigned int) v.r << (8 * f.comp_offset[0])) |
        ((unsigned int) v.g << (8 * f.comp_offset[1])) |
        ((unsigned int) v.b << (8 * f.comp_offset[2])) |
        ((unsigned int) v.a << (8 * f.comp_offset[3]));
    return;
  }
  p[f.comp_offset[0]] = v.r;
  p[f.comp_offset[1]] = v.g;
  p[f.comp_offset[2]] = v.b;
}

/* ---- Y'CbCr and GRAY (ZC_FAMILY_YUV, ZC_FAMILY_GRAY) ---- */

/* Luma code values of black and white in the frame's range */
ZC_DEVICE int zc_luma_black (const ZcFrame & f) { return f.full_range ? 0 : 16; }
ZC_DEVICE int zc_luma_white (const ZcFrame & f) { return f.full_range ? 255 : 235; }

ZC_DEVICE int
zc_read_luma (const ZcFrame & f, int x, int y)
{
  return *zc_component (f, 0, x, y);
}

ZC_DEVICE void
zc_write_luma (const ZcFrame & f, int x, int y, int v)
{
  *zc_component (f, 0, x, y) = (unsigned char) (v < 0 ? 0 : v > 255 ? 255 : v);
}

/* Whether the frame has chroma, and whether pixel (x, y) is the one whose
 * thread handles the chroma sample covering it (the top-left pixel of the
 * sample's block): chroma is then read and written once per sample */
ZC_DEVICE bool
zc_has_chroma (const ZcFrame & f)
{
  return f.family == ZC_FAMILY_YUV;
}

ZC_DEVICE bool
zc_owns_chroma (const ZcFrame & f, int x, int y)
{
  return zc_has_chroma (f) &&
      ((x & ((1 << f.chroma_shift_x) - 1)) | (y & ((1 << f.chroma_shift_y) - 1))) == 0;
}

/* The chroma sample covering pixel (x, y) */
ZC_DEVICE void
zc_read_chroma (const ZcFrame & f, int x, int y, int *u, int *v)
{
  int sx = x >> f.chroma_shift_x, sy = y >> f.chroma_shift_y;
  *u = *zc_component (f, 1, sx, sy);
  *v = *zc_component (f, 2, sx, sy);
}

ZC_DEVICE void
zc_write_chroma (const ZcFrame & f, int x, int y, int u, int v)
{
  int sx = x >> f.chroma_shift_x, sy = y >> f.chroma_shift_y;
  *zc_component (f, 1, sx, sy) = (unsigned char) (u < 0 ? 0 : u > 255 ? 255 : u);
  *zc_component (f, 2, sx, sy) = (unsigned char) (v < 0 ? 0 : v > 255 ? 255 : v);
}

#undef ZC_DEVICE

#endif /* __CUDACC__ || __CUDACC_RTC__ */

#endif /* GST_ZC_KERNEL_CUH */
