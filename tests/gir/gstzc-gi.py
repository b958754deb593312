#!/usr/bin/env python3
# gst-zerocopy: the library through GObject introspection (GstZc-1.0), as
# a Python application uses it: open the device (or the CPU backend), make
# an allocator, allocate a memory and read its type and pointers.
# SPDX-License-Identifier: LGPL-2.1-or-later
import sys

try:
    import gi

    gi.require_version("Gst", "1.0")
    gi.require_version("GstZc", "1.0")
    from gi.repository import Gst, GstZc  # noqa: E402
except (ImportError, ValueError) as e:
    # a machine that runs the build without PyGObject or GStreamer's
    # typelibs (the GPU host): skipped, with the reason
    print("skipped: %s" % e)
    sys.exit(77)


def main():
    Gst.init(None)
    ctx = GstZc.Context.new(-1)
    gpu = ctx.has_gpu()
    print("device:", ctx.get_device_name(), "gpu:", gpu)
    if not gpu:
        print("no GPU:", ctx.get_no_gpu_reason())

    alloc = GstZc.Allocator.new(ctx, GstZc.MemoryType.AUTO)
    want = GstZc.MemoryType.MAPPED if gpu else GstZc.MemoryType.SYSTEM
    assert alloc.get_memory_type() == want, alloc.get_memory_type()
    assert alloc.get_context() == ctx

    mem = alloc.alloc(1 << 20, None)
    assert GstZc.is_zc_memory(mem), "not a GstZcMemory"
    mtype = GstZc.memory_get_memory_type(mem)
    host = GstZc.memory_get_host_pointer(mem)
    dev = GstZc.memory_get_device_pointer(mem)
    print("memory type:", GstZc.memory_type_to_string(mtype),
          "host 0x%x device 0x%x" % (host, dev))
    assert mtype == want, mtype
    assert host != 0 and dev != 0
    assert host % 256 == 0, "data not 256-byte aligned"
    # system memory, and mapped memory with unified addressing: one address
    assert dev == host, "device pointer 0x%x != host 0x%x" % (dev, host)
    assert GstZc.memory_get_device_id(mem) == (ctx.get_device_id() if gpu else -1)

    ok, info = mem.map(Gst.MapFlags.READ)
    assert ok and info.size == 1 << 20
    mem.unmap(info)
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
