/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
/*
 * zcfilter's properties as the fields of its Settings (zcfilterplan.h).
 * The element (gstzcfilter.cpp) installs them, with the blurbs users read,
 * and holds the lock and the renegotiation around them; here each id is
 * mapped to its field, and the scaling method is given its enum type.
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "zcfilterproperties.h"

GType
gst_zc_filter_method_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_ZC_FILTER_METHOD_NEAREST, "Nearest neighbour: the source pixel "
          "under the centre of each output pixel", "nearest-neighbour"},
    {GST_ZC_FILTER_METHOD_BILINEAR, "Bilinear: 2 taps when enlarging, an "
          "averaging triangle when shrinking (videoscale's bilinear); "
          "shrinks at most 64 times per axis", "bilinear"},
    {GST_ZC_FILTER_METHOD_BICUBIC, "Bicubic: Mitchell-Netravali cubic, "
          "B = C = 1/3 (videoscale's mitchell); shrinks at most 64 times per "
          "axis", "bicubic"},
    {0, NULL, NULL},
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstZcFilterMethod", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

namespace zcfilter {

bool
set_property (Settings & s, guint prop_id, const GValue * value)
{
  switch (prop_id) {
    case PROP_METHOD:
      s.method = (GstZcFilterMethod) g_value_get_enum (value);
      break;
    case PROP_ADD_BORDERS:
      s.add_borders = g_value_get_boolean (value);
      break;
    case PROP_CROP_LEFT:
      s.crop_left = g_value_get_int (value);
      break;
    case PROP_CROP_RIGHT:
      s.crop_right = g_value_get_int (value);
      break;
    case PROP_CROP_TOP:
      s.crop_top = g_value_get_int (value);
      break;
    case PROP_CROP_BOTTOM:
      s.crop_bottom = g_value_get_int (value);
      break;
    case PROP_VIDEO_DIRECTION:
      s.direction = (GstVideoOrientationMethod) g_value_get_enum (value);
      break;
    case PROP_BRIGHTNESS:
      s.brightness = g_value_get_double (value);
      break;
    case PROP_CONTRAST:
      s.contrast = g_value_get_double (value);
      break;
    case PROP_SATURATION:
      s.saturation = g_value_get_double (value);
      break;
    case PROP_HUE:
      s.hue = g_value_get_double (value);
      break;
    case PROP_GAMMA:
      s.gamma = g_value_get_double (value);
      break;
    case PROP_INVERT:
      s.invert = g_value_get_boolean (value);
      break;
    case PROP_GRAYSCALE:
      s.grayscale = g_value_get_boolean (value);
      break;
    case PROP_BLUR_SIGMA:
      s.blur_sigma = g_value_get_double (value);
      break;
    case PROP_SHARPEN:
      s.sharpen = g_value_get_double (value);
      break;
    case PROP_EDGES:
      s.edges = g_value_get_boolean (value);
      break;
    case PROP_N_THREADS:
      s.n_threads = g_value_get_uint (value);
      break;
    default:
      return false;
  }
  return true;
}

bool
get_property (const Settings & s, guint prop_id, GValue * value)
{
  switch (prop_id) {
    case PROP_METHOD:
      g_value_set_enum (value, s.method);
      break;
    case PROP_ADD_BORDERS:
      g_value_set_boolean (value, s.add_borders);
      break;
    case PROP_CROP_LEFT:
      g_value_set_int (value, s.crop_left);
      break;
    case PROP_CROP_RIGHT:
      g_value_set_int (value, s.crop_right);
      break;
    case PROP_CROP_TOP:
      g_value_set_int (value, s.crop_top);
      break;
    case PROP_CROP_BOTTOM:
      g_value_set_int (value, s.crop_bottom);
      break;
    case PROP_VIDEO_DIRECTION:
      g_value_set_enum (value, s.direction);
      break;
    case PROP_BRIGHTNESS:
      g_value_set_double (value, s.brightness);
      break;
    case PROP_CONTRAST:
      g_value_set_double (value, s.contrast);
      break;
    case PROP_SATURATION:
      g_value_set_double (value, s.saturation);
      break;
    case PROP_HUE:
      g_value_set_double (value, s.hue);
      break;
    case PROP_GAMMA:
      g_value_set_double (value, s.gamma);
      break;
    case PROP_INVERT:
      g_value_set_boolean (value, s.invert);
      break;
    case PROP_GRAYSCALE:
      g_value_set_boolean (value, s.grayscale);
      break;
    case PROP_BLUR_SIGMA:
      g_value_set_double (value, s.blur_sigma);
      break;
    case PROP_SHARPEN:
      g_value_set_double (value, s.sharpen);
      break;
    case PROP_EDGES:
      g_value_set_boolean (value, s.edges);
      break;
    case PROP_N_THREADS:
      g_value_set_uint (value, s.n_threads);
      break;
    default:
      return false;
  }
  return true;
}

bool
orientation_from_tag (const gchar * tag, GstVideoOrientationMethod * method)
{
  static const struct
  {
    const gchar *tag;
    GstVideoOrientationMethod method;
  } map[] = {
    {"rotate-0", GST_VIDEO_ORIENTATION_IDENTITY},
    {"rotate-90", GST_VIDEO_ORIENTATION_90R},
    {"rotate-180", GST_VIDEO_ORIENTATION_180},
    {"rotate-270", GST_VIDEO_ORIENTATION_90L},
    {"flip-rotate-0", GST_VIDEO_ORIENTATION_HORIZ},
    {"flip-rotate-90", GST_VIDEO_ORIENTATION_UL_LR},
    {"flip-rotate-180", GST_VIDEO_ORIENTATION_VERT},
    {"flip-rotate-270", GST_VIDEO_ORIENTATION_UR_LL},
  };
  *method = GST_VIDEO_ORIENTATION_IDENTITY;
  bool known = false;
  for (const auto & e : map) {
    if (g_str_equal (tag, e.tag)) {
      *method = e.method;
      known = true;
    }
  }
  return known;
}

} /* namespace zcfilter */
