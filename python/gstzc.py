# gst-zerocopy: video frames in Python without copies.
# SPDX-License-Identifier: LGPL-2.1-or-later
"""Views of a GStreamer video frame's planes, in place.

    import gstzc
    with gstzc.Frame(buffer, caps, writable=True) as frame:
        y = numpy.asarray(frame.planes[0])     # rows x columns (x channels)
        y[:] = 255 - y                         # written in the frame itself

A frame comes from a buffer and its caps (a pad probe's buffer, an appsink
sample through Frame.from_sample(), a buffer an appsrc fills). Its planes
describe themselves to NumPy (``__array_interface__``), to PyTorch and any
DLPack consumer (``__dlpack__``: ``torch.from_dlpack(plane)``) and, on the
GPU, to CUDA array consumers (``__cuda_array_interface__`` version 3):

- CPU views (the default): the frame is mapped once the GPU work on it is
  done, with the strides and offsets of its GstVideoMeta, writable when
  asked and when its memory is held by this buffer alone. A view keeps the
  buffer mapped and alive as long as it exists, after the pipeline has let
  the buffer go.
- GPU views (``gpu=True``, ``stream=`` the consumer's ``cudaStream_t`` as
  an int): the frame's memory must be GPU memory of gst-zerocopy
  (``memory:CUDAZeroCopy``); anything else raises NotOnGpuError. The stream
  is ordered after the frame's fence, without blocking the host. After the
  user's GPU work, ``frame.record(stream)`` (or leaving a ``with`` block)
  fences the frame from that stream, so the next element waits for it.
  DLPack's device type says which memory it is: CUDA host for mapped pinned
  memory, CUDA managed for managed memory, CUDA for device memory.
"""

import ctypes

import gi

gi.require_version("Gst", "1.0")
gi.require_version("GstVideo", "1.0")
gi.require_version("GstZc", "1.0")
from gi.repository import GLib, Gst, GstVideo, GstZc  # noqa: E402

__all__ = ["Frame", "Plane", "NotOnGpuError"]


class NotOnGpuError(ValueError):
    """A GPU view was asked of a frame that no GPU addresses (system
    memory, or a frame that did not cross zcupload)."""


# DLPack (dlpack.h, v0.x ABI that NumPy and PyTorch import)
_kDLCPU, _kDLCUDA, _kDLCUDAHost, _kDLCUDAManaged = 1, 2, 3, 13
_kDLUInt = 1


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int), ("device_id", ctypes.c_int)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice),
                ("ndim", ctypes.c_int), ("dtype", _DLDataType),
                ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("byte_offset", ctypes.c_uint64)]


class _DLManagedTensor(ctypes.Structure):
    pass


_Deleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(_DLManagedTensor))
_DLManagedTensor._fields_ = [("dl_tensor", _DLTensor),
                             ("manager_ctx", ctypes.c_void_p),
                             ("deleter", _Deleter)]

# What a tensor handed out keeps alive (its plane, shape and strides), by
# the managed tensor's address, until its consumer calls the deleter.
_exported = {}


@_Deleter
def _dl_deleter(managed):
    _exported.pop(ctypes.addressof(managed.contents), None)


# the destructor gets the dying capsule as a raw pointer: turning it into a
# Python object again, under deallocation, would crash
_PyCapsule_Destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p,
                           _PyCapsule_Destructor]
_PyCapsule_IsValid = ctypes.pythonapi.PyCapsule_IsValid
_PyCapsule_IsValid.restype = ctypes.c_int
_PyCapsule_IsValid.argtypes = [ctypes.c_void_p, ctypes.c_char_p]
_PyCapsule_GetPointer = ctypes.pythonapi.PyCapsule_GetPointer
_PyCapsule_GetPointer.restype = ctypes.c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.c_void_p, ctypes.c_char_p]


@_PyCapsule_Destructor
def _capsule_destructor(capsule):
    # a capsule never consumed (still named "dltensor") frees its tensor
    if _PyCapsule_IsValid(capsule, b"dltensor"):
        addr = _PyCapsule_GetPointer(capsule, b"dltensor")
        _exported.pop(addr, None)


def _video_info(caps):
    if isinstance(caps, GstVideo.VideoInfo):
        return caps
    if hasattr(GstVideo.VideoInfo, "new_from_caps"):  # GStreamer 1.20+
        info = GstVideo.VideoInfo.new_from_caps(caps)
        if info is None:
            raise ValueError("not video caps: %s" % caps.to_string())
        return info
    info = GstVideo.VideoInfo()
    if not info.from_caps(caps):
        raise ValueError("not video caps: %s" % caps.to_string())
    return info


class Plane:
    """One plane of a Frame: rows x columns (x channels) samples of one or
    two bytes, rows ``stride`` bytes apart."""

    def __init__(self, frame, index):
        # the mapped frame itself, so that a view outlives Frame.release();
        # not the Frame, which holds its planes: no cycle, so the buffer
        # goes back as soon as the last view and the Frame are gone
        self._f = f = frame._f
        self.index = index
        self.gpu = frame.gpu
        self.writable = frame.writable
        self.stream = frame.stream
        self.memory_type = frame.memory_type
        self.rows, self.columns, self.channels, self.sample_bytes = \
            f.get_plane_layout(index)
        self.stride = f.get_plane_stride(index)
        if self.channels > 1:
            self.shape = (self.rows, self.columns, self.channels)
            byte_strides = (self.stride, self.channels * self.sample_bytes,
                            self.sample_bytes)
        else:
            self.shape = (self.rows, self.columns)
            byte_strides = (self.stride, self.sample_bytes)
        self.strides = byte_strides
        self.typestr = "<u%d" % self.sample_bytes

    @property
    def data(self):
        """The address of the plane's first sample: the CPU's for a CPU
        frame, the GPU's for a GPU frame."""
        if self.gpu:
            return self._f.get_plane_device_data(self.index)
        return self._f.get_plane_data(self.index)

    @property
    def __array_interface__(self):
        if self.gpu:
            raise TypeError("a GPU view: use __cuda_array_interface__ or "
                            "__dlpack__, or make a CPU Frame")
        return {"shape": self.shape, "typestr": self.typestr,
                "data": (self.data, not self.writable),
                "strides": self.strides, "version": 3}

    @property
    def __cuda_array_interface__(self):
        if not self.gpu:
            raise NotOnGpuError("a CPU view: make the Frame with gpu=True "
                                "for the GPU's addresses")
        return {"shape": self.shape, "typestr": self.typestr,
                "data": (self.data, not self.writable),
                "strides": self.strides, "version": 3,
                "stream": self.stream}

    def __dlpack_device__(self):
        if not self.gpu:
            return (_kDLCPU, 0)
        kind = {GstZc.MemoryType.MAPPED: _kDLCUDAHost,
                GstZc.MemoryType.MANAGED: _kDLCUDAManaged,
                GstZc.MemoryType.DEVICE: _kDLCUDA}[self.memory_type]
        return (kind, self._f.get_device_id())

    def __dlpack__(self, stream=None, max_version=None, dl_device=None,
                   copy=None):
        # max_version: DLPack 1.0 consumers (NumPy 2, PyTorch 2.5) accept
        # the unversioned capsule made here
        if copy:
            raise BufferError("gstzc views share the frame's memory: no copy")
        if dl_device is not None and tuple(dl_device) != \
                self.__dlpack_device__():
            raise BufferError("the frame is on device %s, not %s" % (
                self.__dlpack_device__(), tuple(dl_device)))
        device_type, device_id = self.__dlpack_device__()
        if self.gpu and stream != -1:
            # the consumer's stream waits for the frame's fence; None and 1
            # are the legacy default stream, 2 the per-thread one
            self._f.wait_on_stream(1 if stream is None else int(stream))
        ndim = len(self.shape)
        shape = (ctypes.c_int64 * ndim)(*self.shape)
        strides = (ctypes.c_int64 * ndim)(
            *[s // self.sample_bytes for s in self.strides])
        managed = _DLManagedTensor()
        t = managed.dl_tensor
        t.data = self.data
        t.device = _DLDevice(device_type, device_id)
        t.ndim = ndim
        t.dtype = _DLDataType(_kDLUInt, 8 * self.sample_bytes, 1)
        t.shape = shape
        t.strides = strides
        t.byte_offset = 0
        managed.deleter = _dl_deleter
        addr = ctypes.addressof(managed)
        _exported[addr] = (managed, shape, strides, self)
        return _PyCapsule_New(addr, b"dltensor", _capsule_destructor)


class Frame:
    """A video frame's planes in place: ``Frame(buffer, caps)`` for the
    CPU, ``Frame(buffer, caps, gpu=True, stream=s)`` for the GPU. Views
    (numpy.asarray(plane), torch.from_dlpack(plane), a CUDA array
    consumer) keep it mapped and its buffer alive."""

    def __init__(self, buffer, caps, writable=False, gpu=False, stream=None):
        info = _video_info(caps)
        self.writable = bool(writable)
        self.gpu = bool(gpu)
        # a GPU frame's stream: the caller's, or the legacy default stream
        # (1, as __cuda_array_interface__ v3 names it; 0 is not allowed there)
        self.stream = (1 if stream in (None, 0) else int(stream)) \
            if gpu else stream
        try:
            if self.gpu:
                self._f = GstZc.Frame.new_for_gpu(buffer, info, self.writable)
            else:
                flags = Gst.MapFlags.READ
                if self.writable:
                    flags |= Gst.MapFlags.WRITE
                self._f = GstZc.Frame.map(buffer, info, flags)
        except GLib.Error as e:
            if self.gpu and "no GPU addresses" in e.message:
                raise NotOnGpuError(e.message) from None
            raise ValueError(e.message) from None
        self.memory_type = self._f.get_memory_type()
        self.planes = [Plane(self, i) for i in range(self._f.get_n_planes())]
        if self.gpu:
            self.wait(self.stream)

    @classmethod
    def from_sample(cls, sample, **kw):
        """The frame of an appsink's Gst.Sample."""
        return cls(sample.get_buffer(), sample.get_caps(), **kw)

    def _live(self):
        if self._f is None:
            raise ValueError("the frame was released")
        return self._f

    def wait(self, stream):
        """Orders ``stream`` (a cudaStream_t as an int) after the GPU work
        on the frame, without blocking the host."""
        self._live().wait_on_stream(int(stream))

    def record(self, stream=None):
        """Fences the frame after the work queued on ``stream`` (default:
        the stream the frame was made with): the next element waits."""
        s = self.stream if stream is None else stream
        self._live().record_on_stream(int(s or 1))

    def release(self):
        """Lets the frame go; views made from it keep it until they go."""
        self._f = None
        self.planes = []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        # reads too: the producer must not overwrite what a kernel still
        # reads
        if self.gpu and exc[0] is None:
            self.record()
        self.release()
        return False
