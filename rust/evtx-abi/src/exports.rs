//! The list of `include/evtx.h`'s exported functions, written once as a table in
//! [`exports!`](crate::exports!).
//!
//! `rust/capi/src/ffi.rs` writes its functions out by hand, because cbindgen copies their doc
//! comments into the header and does not expand macros; it invokes `exports!(check)`, so each
//! function of the table must be there with the same signature. The reference shim takes its
//! functions from `exports!(define Library)`. [`NAMES`] lists the table, so a test can hold it
//! to the header (whose functions are capi's): a function added to one side only fails a build
//! or a test.

/// The exported functions of `include/evtx.h`, each a thin wrapper around [`crate::front`].
///
/// - `exports!(define L)` defines them over the [`crate::front::Library`] `L`, `#[no_mangle]`
///   (the reference shim: their contracts are the doc comments of `rust/capi/src/ffi.rs`);
/// - `exports!(check)` asserts that the functions of that name in scope have the table's
///   signatures, at compile time (`rust/capi`);
/// - `exports!(names)` defines `pub const NAMES: &[&str]`, the table's function names.
#[macro_export]
macro_rules! exports {
    ($mode:ident $($library:ty)?) => {
        $crate::exports! { @each $mode ($($library)?)
            [safe fn evtx_abi_version() -> u32 { $crate::abi::EVTX_ABI_VERSION }]
            [safe fn evtx_backend_name() -> *const ::std::ffi::c_char {
                <ExportedLibrary as $crate::front::Library>::NAME.as_ptr()
            }]
            [safe fn evtx_backend_version() -> *const ::std::ffi::c_char {
                <ExportedLibrary as $crate::front::Library>::VERSION.as_ptr()
            }]
            [safe fn evtx_status_name(status: u32) -> *const ::std::ffi::c_char {
                $crate::front::status_name(status)
            }]
            [safe fn evtx_last_error() -> *const ::std::ffi::c_char {
                $crate::front::last_error()
            }]
            [unsafe fn evtx_options_init(options: *mut $crate::abi::evtx_options) -> () {
                $crate::front::options_init(options)
            }]
            [unsafe fn evtx_options_init_v1(options: *mut $crate::abi::evtx_options) -> () {
                $crate::front::options_init_v1(options)
            }]
            [unsafe fn evtx_parser_open_path(
                path: *const ::std::ffi::c_char,
                options: *const $crate::abi::evtx_options,
                out: *mut *mut $crate::front::evtx_parser
            ) -> $crate::abi::evtx_status {
                $crate::front::parser_open_path::<ExportedLibrary>(path, options, out)
            }]
            [unsafe fn evtx_parser_open_buffer(
                data: *const u8,
                len: usize,
                options: *const $crate::abi::evtx_options,
                out: *mut *mut $crate::front::evtx_parser
            ) -> $crate::abi::evtx_status {
                $crate::front::parser_open_buffer::<ExportedLibrary>(data, len, options, out)
            }]
            [unsafe fn evtx_parser_next(
                parser: *mut $crate::front::evtx_parser,
                record: *mut $crate::abi::evtx_record
            ) -> $crate::abi::evtx_status {
                $crate::front::parser_next(parser, record)
            }]
            [unsafe fn evtx_parser_next_batch(
                parser: *mut $crate::front::evtx_parser,
                max_entries: usize,
                max_bytes: usize,
                batch: *mut $crate::abi::evtx_batch
            ) -> $crate::abi::evtx_status {
                $crate::front::parser_next_batch(parser, max_entries, max_bytes, batch)
            }]
            [unsafe fn evtx_parser_batch_system(
                parser: *mut $crate::front::evtx_parser,
                system: *mut $crate::abi::evtx_batch_system
            ) -> $crate::abi::evtx_status {
                $crate::front::parser_batch_system(parser, system)
            }]
            [unsafe fn evtx_parser_batch_timestamps(
                parser: *mut $crate::front::evtx_parser,
                texts: *mut $crate::abi::evtx_batch_texts
            ) -> $crate::abi::evtx_status {
                $crate::front::parser_batch_timestamps(parser, texts)
            }]
            [unsafe fn evtx_parser_dump(
                parser: *mut $crate::front::evtx_parser,
                write: $crate::abi::evtx_write_fn,
                on_error: $crate::abi::evtx_error_fn,
                user_data: *mut ::std::ffi::c_void,
                stats: *mut $crate::abi::evtx_stats
            ) -> $crate::abi::evtx_status {
                $crate::front::parser_dump(parser, write, on_error, user_data, stats)
            }]
            [unsafe fn evtx_parser_free(parser: *mut $crate::front::evtx_parser) -> () {
                $crate::front::parser_free(parser)
            }]
            [unsafe fn evtx_triage_path(
                path: *const ::std::ffi::c_char,
                silence_seconds: u64,
                write: $crate::abi::evtx_write_fn,
                user_data: *mut ::std::ffi::c_void
            ) -> $crate::abi::evtx_status {
                $crate::front::triage_path::<ExportedLibrary>(
                    path, silence_seconds, write, user_data
                )
            }]
        }
    };
    (@each define ($library:ty)
        $([$safety:tt fn $name:ident ($($arg:ident: $type:ty),*) -> $ret:ty $body:block])*) => {
        type ExportedLibrary = $library;
        $($crate::exports! { @define $safety $name ($($arg: $type),*) -> $ret $body })*
    };
    (@each check ()
        $([$safety:tt fn $name:ident ($($arg:ident: $type:ty),*) -> $ret:ty $body:block])*) => {
        $(const _: $crate::exports!(@type $safety ($($type),*) -> $ret) = $name;)*
    };
    (@each names ()
        $([$safety:tt fn $name:ident ($($arg:ident: $type:ty),*) -> $ret:ty $body:block])*) => {
        /// The exported functions' names, in the header's order.
        pub const NAMES: &[&str] = &[$(stringify!($name)),*];
    };
    (@define safe $name:ident ($($arg:ident: $type:ty),*) -> $ret:ty $body:block) => {
        #[no_mangle]
        pub extern "C" fn $name($($arg: $type),*) -> $ret $body
    };
    (@define unsafe $name:ident ($($arg:ident: $type:ty),*) -> $ret:ty $body:block) => {
        /// # Safety
        /// The contract of the function of this name in `rust/capi/src/ffi.rs`.
        #[no_mangle]
        pub unsafe extern "C" fn $name($($arg: $type),*) -> $ret {
            // SAFETY: the caller's contract, which the `front` function forwards.
            unsafe { $body }
        }
    };
    (@type safe ($($type:ty),*) -> $ret:ty) => { extern "C" fn($($type),*) -> $ret };
    (@type unsafe ($($type:ty),*) -> $ret:ty) => { unsafe extern "C" fn($($type),*) -> $ret };
}

exports!(names);
