//! Shared by the fuzz targets: runs a body, first keeping a copy of the input so that a
//! panic hook can save it to `$GPUMST_FUZZ_ARTIFACTS/crash-HASH` (libFuzzer's own
//! crash file is not written when libfuzzer-sys's panic hook aborts in these builds).

use std::sync::{Mutex, Once};

static INPUT: Mutex<Vec<u8>> = Mutex::new(Vec::new());

pub fn run(data: &[u8], body: fn(&[u8])) {
    static HOOK: Once = Once::new();
    HOOK.call_once(|| {
        let next = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let (Ok(dir), Ok(input)) = (std::env::var("GPUMST_FUZZ_ARTIFACTS"), INPUT.try_lock())
            {
                // FNV-1a, for a stable name.
                let hash = input.iter().fold(0xcbf29ce484222325u64, |h, &b| {
                    (h ^ b as u64).wrapping_mul(0x100000001b3)
                });
                let path = format!("{dir}/crash-{hash:016x}");
                if std::fs::write(&path, &*input).is_ok() {
                    eprintln!("gpumst-fuzz: input saved to {path}");
                }
            }
            next(info)
        }));
    });
    {
        let mut input = INPUT.lock().unwrap_or_else(|p| p.into_inner());
        input.clear();
        input.extend_from_slice(data);
    }
    body(data)
}
