/* gst-zerocopy
 * SPDX-License-Identifier: LGPL-2.1-or-later
 */
#ifdef HAVE_CONFIG_H
#include "config.h"
#endif

#include "gstzcmemorytype.h"

GType
gst_zc_memory_type_get_type (void)
{
  static GType type = 0;
  static const GEnumValue values[] = {
    {GST_ZC_MEMORY_TYPE_AUTO, "Pick for the device: mapped on discrete GPUs "
          "and Jetson Xavier/Orin, managed on older Jetsons, system without "
          "a GPU", "auto"},
    {GST_ZC_MEMORY_TYPE_MAPPED, "Pinned host memory mapped into the GPU "
          "(cudaHostAlloc)", "mapped"},
    {GST_ZC_MEMORY_TYPE_MANAGED, "CUDA managed memory (cudaMallocManaged), "
          "kept on the host and mapped into the GPU on discrete GPUs "
          "(GST_ZC_MANAGED_PLACEMENT=prefetch: migrated where it is used)",
          "managed"},
    {GST_ZC_MEMORY_TYPE_SYSTEM, "Page-aligned host memory, processed on the "
          "CPU", "system"},
    {GST_ZC_MEMORY_TYPE_DEVICE, "GPU memory (cudaMalloc), copied in and out "
          "through pinned staging with async copies", "device"},
    {0, NULL, NULL}
  };
  if (g_once_init_enter (&type)) {
    GType t = g_enum_register_static ("GstZcMemoryType", values);
    g_once_init_leave (&type, t);
  }
  return type;
}

/**
 * gst_zc_memory_type_to_string:
 * @type: a #GstZcMemoryType
 *
 * Returns: (transfer none): the nick of @type ("auto", "mapped", ...)
 */
const gchar *
gst_zc_memory_type_to_string (GstZcMemoryType type)
{
  GEnumClass *klass = (GEnumClass *) g_type_class_ref (GST_TYPE_ZC_MEMORY_TYPE);
  GEnumValue *v = g_enum_get_value (klass, type);
  const gchar *nick = v ? v->value_nick : "unknown";
  g_type_class_unref (klass);
  return nick;
}
