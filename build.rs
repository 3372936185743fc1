//! Link settings of libgpumst (the cdylib): an installed copy carries the SONAME that
//! scripts/install.sh passes in GPUMST_SONAME (development builds have none, so
//! programs linked against target/release find the library by its plain name).
//! Exports need no setting: rustc exports exactly the `#[no_mangle] extern "C"`
//! functions, the C API's `gpumst_*` (scripts/test_install.sh checks that list against the
//! header).

fn main() {
    strip_opencl_sources();
    println!("cargo:rerun-if-env-changed=GPUMST_SONAME");
    let linux = std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux");
    if let Some(soname) = std::env::var("GPUMST_SONAME")
        .ok()
        .filter(|s| linux && !s.is_empty())
    {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{soname}");
    }
    if links_with_lld() {
        // Identical code folding: monomorphized copies that compile to the same bytes
        // (i32 and u32 weights, say) are kept once. The installed library has a 5 MB
        // mark; this takes ~30 KB off. Rust promises no unique function addresses, and
        // gpumst compares none.
        println!("cargo:rustc-cdylib-link-arg=-Wl,--icf=all");
    }
}

/// Whether rustc links this build with its own lld, which takes `--icf`: the default
/// on x86_64 Linux from Rust 1.90, unless the flags choose a linker. (GNU ld, rustc's
/// linker before, rejects the option; older toolchains build without it.)
fn links_with_lld() -> bool {
    println!("cargo:rerun-if-env-changed=CARGO_ENCODED_RUSTFLAGS");
    if std::env::var("TARGET").as_deref() != Ok("x86_64-unknown-linux-gnu") {
        return false;
    }
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if flags.contains("linker") || flags.contains("fuse-ld") {
        return false;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = std::process::Command::new(rustc).arg("--version").output() else {
        return false;
    };
    // "rustc 1.95.0 (...)": the minor version.
    let version = String::from_utf8_lossy(&out.stdout);
    version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|minor| minor.parse::<u32>().ok())
        .is_some_and(|minor| minor >= 90)
}

/// The OpenCL kernel sources the library embeds (and compiles on the device at run
/// time), written to OUT_DIR without their comments and indentation (43 of their 96
/// KB), then xz-compressed (56 KB -> ~12 KB), room under the installed library's 5 MB
/// mark. Every line stays where it was, so a build log's line numbers still point into
/// kernels/opencl/.
fn strip_opencl_sources() {
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    for name in ["types.cl", "primitives.cl", "msf.cl"] {
        let path = format!("kernels/opencl/{name}");
        println!("cargo:rerun-if-changed={path}");
        let source = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let stripped = without_comments(&source).unwrap_or_else(|e| panic!("{path}: {e}"));
        let lines: Vec<&str> = stripped
            .split('\n')
            .map(|line| {
                let line = line.trim_start();
                // A backslash must stay the last character of a continued line.
                if line.trim_end().ends_with('\\') {
                    line
                } else {
                    line.trim_end()
                }
            })
            .collect();
        let mut packed = xz2::write::XzEncoder::new(Vec::new(), 9);
        std::io::Write::write_all(&mut packed, lines.join("\n").as_bytes())
            .and_then(|()| packed.finish())
            .and_then(|packed| std::fs::write(out.join(format!("{name}.xz")), packed))
            .expect("OUT_DIR is writable");
    }
}

/// C source without its comments; a block comment leaves its line breaks, string and
/// character literals are kept as they are.
fn without_comments(source: &str) -> Result<String, String> {
    let mut out = String::with_capacity(source.len());
    let mut chars = source.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                let mut last = c;
                while let Some(&next) = chars.peek() {
                    if next == '\n' {
                        break;
                    }
                    last = next;
                    chars.next();
                }
                if last == '\\' {
                    return Err(
                        "a // comment ends in a backslash (it would go on to the next line)".into(),
                    );
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut previous = ' ';
                loop {
                    match chars.next() {
                        None => return Err("a /* comment is not closed".into()),
                        Some('/') if previous == '*' => break,
                        Some(next) => {
                            if next == '\n' {
                                out.push('\n');
                            }
                            previous = next;
                        }
                    }
                }
            }
            '"' | '\'' => {
                out.push(c);
                while let Some(next) = chars.next() {
                    out.push(next);
                    if next == '\\' {
                        if let Some(escaped) = chars.next() {
                            out.push(escaped);
                        }
                    } else if next == c || next == '\n' {
                        break;
                    }
                }
            }
            _ => out.push(c),
        }
    }
    Ok(out)
}
