/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#pragma once

#include <gst/zerocopy/zerocopy-prelude.h>
#include <gst/zerocopy/gstzcmemorytype.h>
#include <gst/zerocopy/gstzccontext.h>
#include <gst/zerocopy/gstzcutils.h>
#include <gst/zerocopy/gstzcmemory.h>
#include <gst/zerocopy/gstzcbufferpool.h>
#include <gst/zerocopy/gstzcforeign.h>
#include <gst/zerocopy/gstzcfd.h>
#include <gst/zerocopy/gstzcframe.h>
