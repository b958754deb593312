/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 *
 * zcfilter's property ids and their values in and out of a Settings
 * (zcfilterproperties.cpp). For gstzcfilter.cpp only.
 */
#pragma once

#include "zcfilterplan.h"

enum
{
  PROP_0,
  PROP_METHOD,
  PROP_ADD_BORDERS,
  PROP_CROP_LEFT,
  PROP_CROP_RIGHT,
  PROP_CROP_TOP,
  PROP_CROP_BOTTOM,
  PROP_VIDEO_DIRECTION,
  PROP_BRIGHTNESS,
  PROP_CONTRAST,
  PROP_SATURATION,
  PROP_HUE,
  PROP_GAMMA,
  PROP_INVERT,
  PROP_GRAYSCALE,
  PROP_BLUR_SIGMA,
  PROP_SHARPEN,
  PROP_EDGES,
  PROP_N_THREADS,
};

namespace zcfilter {

/* Stores @value in the field of @s that property @prop_id holds; false
 * for an id that is none of zcfilter's */
bool set_property (Settings & s, guint prop_id, const GValue * value);

/* Sets @value from the field of @s that property @prop_id holds; false
 * for an id that is none of zcfilter's */
bool get_property (const Settings & s, guint prop_id, GValue * value);

/* The orientation an image-orientation tag (GST_TAG_IMAGE_ORIENTATION)
 * names, as videoflip reads it; false, and identity, for a name it does
 * not know */
bool orientation_from_tag (const gchar * tag,
    GstVideoOrientationMethod * method);

} /* namespace zcfilter */
