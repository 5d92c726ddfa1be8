//! Reading a node's GPUs through NVML (the I/O edge of `capops inventory`).
//!
//! nvml-wrapper loads `libnvidia-ml.so.1` (or the library a path names) at run
//! time, so capops builds and runs everywhere; without the NVIDIA driver the
//! load fails and [`NvmlReader::read`] says so as a [`ReadError`], never a
//! panic. Symbols are looked up when used, so a library lacking a function
//! gives an error for that call. GPU-instance details (profile id,
//! placement) have no safe wrapper: they are read through the raw functions
//! the wrapper exposes, checked for presence first. `nvmlDeviceGetMaxMigDeviceCount`
//! is a maximum: indexes without a device answer NOT_FOUND and are skipped.

use crate::gpu::inventory::{Gpu, GpuReader, MigDevice, MigMode, NodeInventory, ReadError};
use nvml_wrapper::Nvml;
use nvml_wrapper::error::NvmlError;
use std::ffi::OsStr;

/// The most MIG device slots read per GPU (hardware has at most 7).
const MAX_MIG_SLOTS: u32 = 32;

/// The library NVML is loaded from when no path is given.
pub const DEFAULT_LIBRARY: &str = "libnvidia-ml.so.1";

/// Reads GPUs through NVML, from the default library or the one at `library`.
pub struct NvmlReader {
    pub library: Option<String>,
    /// What `library` is when it is there and is not a file (`a named
    /// pipe`): never handed to the loader.
    pub not_a_file: Option<&'static str>,
}

/// The most GPUs one node is believed to hold (NVLink domains of 72 and 144
/// GPUs span several nodes; no node has more than a few dozen).
const MAX_GPUS: u32 = 1_024;

fn failed(call: &'static str) -> impl Fn(NvmlError) -> ReadError {
    move |e| ReadError::Failed {
        call,
        detail: e.to_string(),
    }
}

impl NvmlReader {
    fn init(&self) -> Result<Nvml, ReadError> {
        let library = self.library.as_deref().unwrap_or(DEFAULT_LIBRARY);
        // A path that is there but is no file (a FIFO would hold the loader
        // forever, a folder or device cannot be a library) is refused
        // before it is opened (the command line looked: `not_a_file`).
        if let (Some(path), Some(what)) = (self.library.as_deref(), self.not_a_file) {
            return Err(ReadError::LibraryNotFound {
                library: library.to_string(),
                detail: format!("{path} is {what}, not a library file"),
            });
        }
        let result = match &self.library {
            Some(path) => Nvml::builder().lib_path(OsStr::new(path)).init(),
            None => Nvml::init(),
        };
        result.map_err(|e| match e {
            NvmlError::LibloadingError(err) => ReadError::LibraryNotFound {
                library: library.to_string(),
                detail: err.to_string(),
            },
            NvmlError::FailedToLoadSymbol(s) => ReadError::Unavailable(format!(
                "{library} lacks {s}; is it the NVIDIA driver's library?"
            )),
            NvmlError::DriverNotLoaded => {
                ReadError::Unavailable("the NVIDIA kernel driver is not loaded".into())
            }
            NvmlError::NoPermission => {
                ReadError::Unavailable("no permission to talk to the NVIDIA driver".into())
            }
            other => ReadError::Failed {
                call: "nvmlInit_v2",
                detail: other.to_string(),
            },
        })
    }
}

impl GpuReader for NvmlReader {
    fn read(&self) -> Result<NodeInventory, ReadError> {
        let nvml = self.init()?;
        let driver_version = nvml.sys_driver_version().ok();
        let count = nvml
            .device_count()
            .map_err(failed("nvmlDeviceGetCount_v2"))?;
        // No node holds more GPUs than this; a driver that says so is wrong,
        // and is not believed with billions of allocations.
        if count > MAX_GPUS {
            return Err(ReadError::Failed {
                call: "nvmlDeviceGetCount_v2",
                detail: format!(
                    "the driver reports {count} GPUs, more than the {MAX_GPUS} a node can hold"
                ),
            });
        }
        let mut gpus = Vec::with_capacity(count as usize);
        for index in 0..count {
            let device = nvml
                .device_by_index(index)
                .map_err(failed("nvmlDeviceGetHandleByIndex_v2"))?;
            let mig = match device.mig_mode() {
                Ok(m) => Some(MigMode {
                    current: m.current == 1,
                    pending: m.pending == 1,
                }),
                Err(NvmlError::NotSupported | NvmlError::FailedToLoadSymbol(_)) => None,
                Err(e) => return Err(failed("nvmlDeviceGetMigMode")(e)),
            };
            let mut mig_devices = Vec::new();
            if mig.is_some_and(|m| m.current) {
                let max = device
                    .mig_device_count()
                    .map_err(failed("nvmlDeviceGetMaxMigDeviceCount"))?;
                // No GPU has more than seven MIG devices; a driver (or a
                // library posing as one) that says billions is not asked
                // billions of times.
                for slot in 0..max.min(MAX_MIG_SLOTS) {
                    let dev = match device.mig_device_by_index(slot) {
                        Ok(d) => d,
                        Err(NvmlError::NotFound | NvmlError::InvalidArg) => continue,
                        Err(e) => return Err(failed("nvmlDeviceGetMigDeviceHandleByIndex")(e)),
                    };
                    let (gi_profile_id, placement) = gpu_instance(&nvml, &device, &dev);
                    mig_devices.push(MigDevice {
                        index: slot,
                        uuid: dev.uuid().map_err(failed("nvmlDeviceGetUUID"))?,
                        name: dev.name().ok(),
                        gi_profile_id,
                        placement,
                        memory_mib: dev.memory_info().ok().map(|m| m.total >> 20),
                    });
                }
            }
            gpus.push(Gpu {
                index,
                name: device.name().map_err(failed("nvmlDeviceGetName"))?,
                uuid: device.uuid().map_err(failed("nvmlDeviceGetUUID"))?,
                memory_mib: device.memory_info().ok().map(|m| m.total >> 20),
                mig,
                mig_devices,
            });
        }
        Ok(NodeInventory {
            driver_version,
            gpus,
        })
    }
}

/// The GPU-instance profile id and placement of a MIG device, when the
/// library has the functions (None otherwise; the name is the fallback).
fn gpu_instance(
    nvml: &Nvml,
    parent: &nvml_wrapper::Device<'_>,
    dev: &nvml_wrapper::Device<'_>,
) -> (Option<u32>, Option<(u32, u32)>) {
    let lib = nvml.lib();
    let (Ok(get_id), Ok(by_id), Ok(info_of)) = (
        lib.nvmlDeviceGetGpuInstanceId.as_ref(),
        lib.nvmlDeviceGetGpuInstanceById.as_ref(),
        lib.nvmlGpuInstanceGetInfo.as_ref(),
    ) else {
        return (None, None);
    };
    // SAFETY: the handles come from this NVML session and outlive the calls;
    // the out-parameters are plain C structs NVML fills in.
    unsafe {
        let mut gi_id: std::os::raw::c_uint = 0;
        if get_id(dev.handle(), &mut gi_id) != 0 {
            return (None, None);
        }
        let mut gi: nvml_wrapper_sys::bindings::nvmlGpuInstance_t = std::ptr::null_mut();
        if by_id(parent.handle(), gi_id, &mut gi) != 0 {
            return (None, None);
        }
        let mut info: nvml_wrapper_sys::bindings::nvmlGpuInstanceInfo_t = std::mem::zeroed();
        if info_of(gi, &mut info) != 0 {
            return (None, None);
        }
        // A placement no GPU has (past the 8 memory slices of the largest,
        // or wrapping round) is not one: the device is shown without it.
        let (start, size) = (info.placement.start, info.placement.size);
        let placement = (size > 0 && start.checked_add(size).is_some_and(|end| end <= 8))
            .then_some((start, size));
        (Some(info.profileId), placement)
    }
}
