//! The `gpumst` command: runs the library on graph files and reports what it finds.

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use clap::{Parser, Subcommand, ValueEnum};
use gpumst::graph::generate::{self, WeightSpec};
use gpumst::graph::io::{self, Format, LoadedGraph};
use gpumst::graph::EdgeListGraph;
use gpumst::{probe, Algorithm, Context, Devices, Error, MsfOptions, Options, Tier};
use serde_json::json;

/// Counts heap bytes in use, so `msf --json` can report the algorithm's peak memory.
struct CountingAllocator;

static HEAP_IN_USE: AtomicUsize = AtomicUsize::new(0);
static HEAP_PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call is forwarded unchanged to the system allocator, which upholds
// GlobalAlloc's contract; the counters are only statistics.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = HEAP_IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            HEAP_PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    // Forwarded so that zeroed arrays keep calloc's untouched pages (the default
    // would allocate and then write every byte).
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's layout.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            let now = HEAP_IN_USE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            HEAP_PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) };
        HEAP_IN_USE.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    // Forwarded so that large blocks grow and shrink in place (mremap) as they do
    // for a program without this counter (the default would copy every byte).
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `alloc` with this layout; the caller guarantees
        // new_size's validity for it.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            if new_size >= layout.size() {
                let grown = new_size - layout.size();
                let now = HEAP_IN_USE.fetch_add(grown, Ordering::Relaxed) + grown;
                HEAP_PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                HEAP_IN_USE.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        p
    }
}

#[global_allocator]
static ALLOCATOR: CountingAllocator = CountingAllocator;

#[derive(Parser)]
#[command(
    name = "gpumst",
    version,
    about = "Minimum spanning forests on GPUs and CPUs"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show the tiers found on this machine, and why each is or is not usable.
    Info {
        /// Print one JSON object instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Compute the minimum spanning forest of a graph file.
    Msf(MsfRun),
    /// Generate a graph and write it to a file (format from the extension).
    Generate {
        #[arg(value_enum)]
        kind: GraphKind,
        #[arg(long)]
        out: PathBuf,
        /// rmat: log2 of the vertex count.
        #[arg(long)]
        scale: Option<u32>,
        /// rmat: edges per vertex.
        #[arg(long, default_value_t = 16)]
        edge_factor: u32,
        /// random: vertex count.
        #[arg(long)]
        vertices: Option<usize>,
        /// random: edge count.
        #[arg(long)]
        edges: Option<usize>,
        /// grid: rows and columns.
        #[arg(long)]
        rows: Option<usize>,
        #[arg(long)]
        cols: Option<usize>,
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// int:LOW:HIGH (uniform integers), float:LOW:HIGH (uniform reals), const:C, or none.
        #[arg(long, default_value = "int:1:1000000", value_parser = parse_weights)]
        weights: WeightSpec,
        #[arg(long, default_value = "auto", value_parser = parse_format)]
        format: Format,
    },
    /// Read a graph file in one format and write it in another.
    Convert {
        input: PathBuf,
        output: PathBuf,
        #[arg(long, default_value = "auto", value_parser = parse_format)]
        from: Format,
        #[arg(long, default_value = "auto", value_parser = parse_format)]
        to: Format,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum GraphKind {
    Rmat,
    Random,
    Grid,
}

fn parse_format(s: &str) -> Result<Format, String> {
    Format::ALL
        .into_iter()
        .find(|f| f.name() == s)
        .ok_or_else(|| {
            format!("unknown format '{s}': expected auto, dimacs, mtx, edgelist, egr or gmst")
        })
}

fn parse_tier(s: &str) -> Result<Tier, String> {
    s.parse().map_err(|e: Error| e.message().to_string())
}

fn parse_devices(s: &str) -> Result<Devices, String> {
    if s.trim() == "all" {
        return Ok(Devices::All);
    }
    s.split(',')
        .map(|d| d.trim().parse::<u32>())
        .collect::<Result<Vec<u32>, _>>()
        .map(Devices::List)
        .map_err(|_| format!("bad --devices '{s}': expected device indices such as 0,1, or all"))
}

fn parse_algorithm(s: &str) -> Result<Algorithm, String> {
    s.parse().map_err(|e: Error| e.message().to_string())
}

fn parse_weights(s: &str) -> Result<WeightSpec, String> {
    let parts: Vec<&str> = s.split(':').collect();
    let bad =
        || format!("bad --weights '{s}': expected int:LOW:HIGH, float:LOW:HIGH, const:C or none");
    let spec = match parts.as_slice() {
        ["none"] => WeightSpec::None,
        ["const", c] => WeightSpec::Constant(c.parse().map_err(|_| bad())?),
        ["int", low, high] => WeightSpec::UniformInt {
            low: low.parse().map_err(|_| bad())?,
            high: high.parse().map_err(|_| bad())?,
        },
        ["float", low, high] => WeightSpec::UniformFloat {
            low: low.parse().map_err(|_| bad())?,
            high: high.parse().map_err(|_| bad())?,
        },
        _ => return Err(bad()),
    };
    spec.validate().map_err(|e| e.message().to_string())?;
    Ok(spec)
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Command::Info { json } => return info(json),
        Command::Msf(run) => msf(&run),
        Command::Generate {
            kind,
            out,
            scale,
            edge_factor,
            vertices,
            edges,
            rows,
            cols,
            seed,
            weights,
            format,
        } => {
            let need = |value: Option<usize>, flag: &str| {
                value.ok_or_else(|| Error::invalid_argument(format!("generate needs --{flag}")))
            };
            (|| {
                let graph = match kind {
                    GraphKind::Rmat => {
                        let scale = scale.ok_or_else(|| {
                            Error::invalid_argument("generate rmat needs --scale")
                        })?;
                        if scale > 32 {
                            return Err(Error::invalid_argument("--scale must be at most 32"));
                        }
                        generate::rmat(scale, edge_factor, seed, &weights)
                    }
                    GraphKind::Random => generate::random(
                        need(vertices, "vertices")?,
                        need(edges, "edges")?,
                        seed,
                        &weights,
                    ),
                    GraphKind::Grid => {
                        generate::grid(need(rows, "rows")?, need(cols, "cols")?, seed, &weights)
                    }
                };
                io::write_graph(&out, format, &graph)?;
                eprintln!(
                    "gpumst: wrote {} ({} vertices, {} edges)",
                    out.display(),
                    graph.num_vertices,
                    graph.num_edges()
                );
                Ok(())
            })()
        }
        Command::Convert {
            input,
            output,
            from,
            to,
        } => (|| {
            let loaded = load(&input, from)?;
            io::write_graph(&output, to, &loaded.graph)
        })(),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gpumst: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Reads a graph file, drawing a progress bar on a terminal when it takes over a second.
fn load(path: &Path, format: Format) -> gpumst::Result<LoadedGraph> {
    let start = Instant::now();
    let bar: std::cell::RefCell<Option<indicatif::ProgressBar>> = std::cell::RefCell::new(None);
    let terminal = std::io::stderr().is_terminal();
    let progress = |done: u64, total: Option<u64>| {
        if !terminal || start.elapsed().as_secs_f64() < 1.0 {
            return;
        }
        let mut bar = bar.borrow_mut();
        let bar = bar.get_or_insert_with(|| {
            let b = indicatif::ProgressBar::new(total.unwrap_or(0));
            b.set_style(
                indicatif::ProgressStyle::with_template(
                    "loading {bytes}/{total_bytes} {wide_bar} {eta}",
                )
                .expect("static template"),
            );
            b
        });
        bar.set_position(done);
    };
    let loaded = io::read_graph(path, format, Some(&progress));
    if let Some(bar) = bar.borrow_mut().take() {
        bar.finish_and_clear();
    }
    loaded
}

#[derive(clap::Args)]
struct MsfRun {
    /// Graph file: DIMACS .gr, Matrix Market .mtx, edge list, ECL .egr, gpumst .gmst (each may be .gz or .xz).
    file: PathBuf,
    #[arg(long, default_value = "auto", value_parser = parse_format)]
    format: Format,
    #[arg(long, default_value = "auto", value_parser = parse_tier)]
    backend: Tier,
    #[arg(long, default_value = "auto", value_parser = parse_algorithm)]
    algorithm: Algorithm,
    /// Write the forest, one `u v w` line per edge in the file's numbering, ascending edge id.
    #[arg(long)]
    edges_out: Option<PathBuf>,
    /// Ignore weights: the spanning forest of lowest edge ids.
    #[arg(long)]
    unweighted: bool,
    /// The maximum spanning forest (heaviest edges first; equal weights by lower edge id).
    #[arg(long)]
    maximum: bool,
    /// CPU threads (0 = all cores).
    #[arg(long, default_value_t = 0)]
    threads: usize,
    /// Compute the forest this many times and report the median compute time.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    repeat: u32,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// On a GPU tier, also time the call on a graph already in device memory (uploaded
    /// first, not timed), as a CUDA or OpenCL application makes it: the forest's ids
    /// are written to device memory, read back once and compared with the host call's.
    #[arg(long)]
    device_inputs: bool,
    /// The most device memory (bytes) a GPU tier may use, or the CPU tier's working
    /// memory; a graph whose working set is larger is solved a partition of its edges
    /// at a time (0 = the device's memory; on the CPU, no cap).
    #[arg(long, default_value_t = 0)]
    device_memory_limit: u64,
    /// GPUs of the tier to open, e.g. 0,1, or all (default: device 0 alone); the
    /// forest is split across them where GPUMST_SPLIT_MIN_EDGES asks for it.
    #[arg(long, value_parser = parse_devices)]
    devices: Option<Devices>,
}

/// The graph uploaded to the context's GPU tier, with room for its forest's ids.
struct DeviceCopy {
    u: gpumst::Buffer<u32>,
    v: gpumst::Buffer<u32>,
    /// The weights' device address and type, and their buffer (kept alive here).
    weights: Option<(usize, gpumst::DType, Box<dyn std::any::Any>)>,
    ids: gpumst::Buffer<u64>,
}

/// `w` uploaded: its address and its buffer, whatever the element type.
fn upload_weights<T: gpumst::Element>(
    ctx: &Context,
    w: &[T],
) -> gpumst::Result<(usize, gpumst::DType, Box<dyn std::any::Any>)> {
    let buffer = ctx.upload(w)?;
    let address = buffer
        .device_address()
        .ok_or_else(|| gpumst::Error::internal("the upload did not land on a GPU tier"))?;
    Ok((address, T::DTYPE, Box::new(buffer)))
}

impl DeviceCopy {
    fn new(ctx: &Context, graph: &EdgeListGraph, weighted: bool) -> gpumst::Result<DeviceCopy> {
        use gpumst::WeightVec as W;
        let weights = match graph.weights.as_ref().filter(|_| weighted) {
            None => None,
            Some(W::I32(w)) => Some(upload_weights(ctx, w)?),
            Some(W::U32(w)) => Some(upload_weights(ctx, w)?),
            Some(W::I64(w)) => Some(upload_weights(ctx, w)?),
            Some(W::U64(w)) => Some(upload_weights(ctx, w)?),
            Some(W::F32(w)) => Some(upload_weights(ctx, w)?),
            Some(W::F64(w)) => Some(upload_weights(ctx, w)?),
        };
        let room = graph.num_vertices.saturating_sub(1).min(graph.num_edges());
        Ok(DeviceCopy {
            u: ctx.upload(&graph.u)?,
            v: ctx.upload(&graph.v)?,
            weights,
            ids: ctx.upload(&vec![0u64; room.max(1)])?,
        })
    }

    /// One call on the device copy: its end-to-end ms and result.
    fn solve(
        &self,
        ctx: &Context,
        num_vertices: usize,
        options: &MsfOptions,
        total_weight: bool,
    ) -> gpumst::Result<(f64, gpumst::msf::DeviceForest)> {
        let not_on_device = || gpumst::Error::internal("the upload did not land on a GPU tier");
        let graph = gpumst::msf::DeviceGraph {
            num_vertices,
            num_edges: self.u.len(),
            u: self.u.device_address().ok_or_else(not_on_device)?,
            v: self.v.device_address().ok_or_else(not_on_device)?,
            weights: self
                .weights
                .as_ref()
                .map(|(address, dtype, _)| (*address, *dtype)),
        };
        let output = gpumst::msf::DeviceOutput {
            edge_ids: self.ids.device_address().ok_or_else(not_on_device)?,
            queue: 0,
            total_weight,
        };
        let t = Instant::now();
        // SAFETY: every address is a buffer of this context's GPU tier made above, of
        // the lengths the graph states, alive for the call.
        let forest = unsafe { ctx.msf_on_device(&graph, options, &output) }?;
        Ok((t.elapsed().as_secs_f64() * 1e3, forest))
    }
}

/// Times `repeat` calls on a device copy of `graph` (with and without the total weight)
/// and checks the forest against the host call's: a JSON object of medians.
fn time_device_inputs(
    ctx: &Context,
    graph: &EdgeListGraph,
    options: &MsfOptions,
    repeat: u32,
    expected: &gpumst::Forest,
) -> gpumst::Result<serde_json::Value> {
    let copy = DeviceCopy::new(ctx, graph, !options.unweighted)?;
    let median = |mut runs: Vec<f64>| {
        runs.sort_by(f64::total_cmp);
        runs[runs.len() / 2]
    };
    let mut bare = Vec::new();
    let mut with_total = Vec::new();
    let mut last = None;
    for _ in 0..repeat {
        let (ms, _) = copy.solve(ctx, graph.num_vertices, options, false)?;
        bare.push(ms);
        let (ms, forest) = copy.solve(ctx, graph.num_vertices, options, true)?;
        with_total.push(ms);
        last = Some(forest);
    }
    let forest = last.expect("repeat >= 1");
    let mut ids = vec![0u64; copy.ids.len()];
    ctx.download(&copy.ids, &mut ids)?;
    ids.truncate(forest.num_edges);
    if ids != expected.edges || forest.total_weight != Some(expected.total_weight) {
        return Err(gpumst::Error::internal(
            "the forest of the graph in device memory differs from the host call's",
        ));
    }
    Ok(json!({
        "end_to_end_ms": median(bare),
        "end_to_end_with_total_weight_ms": median(with_total),
        "forest_matches_host_inputs": true,
    }))
}

fn input_bytes(graph: &EdgeListGraph) -> usize {
    let weight_bytes = graph
        .weights
        .as_ref()
        .map_or(0, |w| w.len() * w.as_weights().dtype().size());
    graph.num_edges() * 8 + weight_bytes
}

/// The library's time per phase since the last call, as a JSON object (only in builds
/// with the `phase-profile` feature).
#[cfg(feature = "phase-profile")]
fn take_phases() -> Option<serde_json::Value> {
    let phases = gpumst::profile::take_phases();
    let faults = gpumst::profile::take_faults();
    if !faults.is_empty() {
        // GPUMST_PROFILE_FAULTS: the page faults per phase.
        let line: Vec<String> = faults.iter().map(|(s, n)| format!("{s}: {n}")).collect();
        eprintln!("page faults: {}", line.join(", "));
    }
    Some(serde_json::Value::Object(
        phases
            .into_iter()
            .map(|(name, ms)| (name.to_string(), json!(ms)))
            .collect(),
    ))
}

#[cfg(not(feature = "phase-profile"))]
fn take_phases() -> Option<serde_json::Value> {
    None
}

fn msf(run: &MsfRun) -> gpumst::Result<()> {
    let ctx = Context::new(&Options {
        tier: run.backend,
        cpu_threads: run.threads,
        device_memory_limit: run.device_memory_limit,
        devices: run.devices.clone().unwrap_or_default(),
        ..Options::default()
    })?;
    let t = Instant::now();
    // The reader parses on the pool it is called from: --threads caps it as it caps
    // the CPU tier.
    let loaded = if run.threads > 0 {
        rayon::ThreadPoolBuilder::new()
            .num_threads(run.threads)
            .build()
            .map_err(|e| gpumst::Error::internal(format!("cannot start the reading threads: {e}")))?
            .install(|| load(&run.file, run.format))?
    } else {
        load(&run.file, run.format)?
    };
    let load_ms = t.elapsed().as_secs_f64() * 1e3;
    let load_phases = take_phases();
    let graph = &loaded.graph;
    let options = MsfOptions {
        algorithm: run.algorithm,
        labels: false,
        unweighted: run.unweighted,
        maximum: run.maximum,
    };
    // The loader's large arrays are freed on a thread of their own: freed during the
    // call, they would hide as much of the call's own growth.
    gpumst::wait_for_background_frees();
    let baseline = HEAP_IN_USE.load(Ordering::Relaxed);
    HEAP_PEAK.store(baseline, Ordering::Relaxed);
    let t = Instant::now();
    let forest = ctx.msf(&graph.view(), &options)?;
    let mut runs = vec![(
        t.elapsed().as_secs_f64() * 1e3,
        forest.device_timings,
        take_phases(),
    )];
    let peak_bytes = HEAP_PEAK.load(Ordering::Relaxed) - baseline;
    for _ in 1..run.repeat {
        let t = Instant::now();
        let again = ctx.msf(&graph.view(), &options)?;
        runs.push((
            t.elapsed().as_secs_f64() * 1e3,
            again.device_timings,
            take_phases(),
        ));
        if again != forest {
            return Err(gpumst::Error::internal(
                "a repeated run gave a different forest",
            ));
        }
    }
    // The run with the median end-to-end time; on a GPU tier its device timings.
    runs.sort_by(|a, b| a.0.total_cmp(&b.0));
    let times: Vec<f64> = runs.iter().map(|r| r.0).collect();
    let (end_to_end_ms, device, phases) = runs.swap_remove(runs.len() / 2);
    let (upload_ms, compute_ms, download_ms) = match device {
        Some(d) => (d.upload_ms, d.compute_ms, d.download_ms),
        None => (0.0, end_to_end_ms, 0.0),
    };
    if let Some(path) = &run.edges_out {
        io::write_forest_edges(path, &loaded, &forest.edges)?;
    }
    let backend = ctx.tier_for(gpumst::Operation::Msf)?;
    let device_inputs = match (run.device_inputs, backend) {
        (false, _) => None,
        (true, Tier::Cpu) => {
            return Err(gpumst::Error::invalid_argument(
                "--device-inputs needs a GPU tier (--backend cuda or opencl)",
            ))
        }
        (true, _) => Some(time_device_inputs(
            &ctx, graph, &options, run.repeat, &forest,
        )?),
    };
    if run.json {
        let object = json!({
            "file": run.file.display().to_string(),
            "format": loaded.format.name(),
            "backend": backend.name(),
            "device": ctx.device_name(),
            "devices": ctx.device_count(),
            "algorithm": run.algorithm.name(),
            "maximum": run.maximum,
            "vertices": graph.num_vertices,
            "edges": graph.num_edges(),
            "forest_edges": forest.edges.len(),
            "components": forest.num_components,
            "total_weight": total_weight_json(&forest.total_weight),
            "file_bytes": std::fs::metadata(&run.file).map(|m| m.len()).ok(),
            "input_bytes": input_bytes(graph),
            "compute_peak_bytes": peak_bytes,
            "device_peak_bytes": device.map(|d| d.peak_device_bytes),
            "device_event_compute_ms": device.and_then(|d| d.compute_device_ms),
            "timings_ms": {"load": load_ms, "upload": upload_ms, "compute": compute_ms, "download": download_ms, "end_to_end": end_to_end_ms},
            "compute_runs_ms": times,
        });
        let mut object = object;
        if let Some(phases) = phases {
            object["phases_ms"] = phases;
        }
        if let Some(phases) = load_phases {
            object["load_phases_ms"] = phases;
        }
        if let Some(device_inputs) = &device_inputs {
            object["device_inputs"] = device_inputs.clone();
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&object).expect("JSON of plain data")
        );
    } else {
        println!(
            "{}: {} vertices, {} edges ({})",
            run.file.display(),
            graph.num_vertices,
            graph.num_edges(),
            loaded.format
        );
        println!(
            "{} spanning forest ({} on the {} tier, {}): {} edges, {} component(s), total weight {}",
            if run.maximum { "maximum" } else { "minimum" },
            run.algorithm,
            backend,
            ctx.device_name(),
            forest.edges.len(),
            forest.num_components,
            forest.total_weight
        );
        match device {
            Some(_) => println!(
                "load {load_ms:.1} ms, upload {upload_ms:.1} ms, device compute {compute_ms:.1} ms, download {download_ms:.1} ms, end to end {end_to_end_ms:.1} ms"
            ),
            None => println!("load {load_ms:.1} ms, compute {compute_ms:.1} ms"),
        }
        if let Some(d) = &device_inputs {
            println!(
                "from device memory: end to end {:.3} ms ({:.3} ms with the total weight), same forest",
                d["end_to_end_ms"].as_f64().unwrap_or(f64::NAN),
                d["end_to_end_with_total_weight_ms"]
                    .as_f64()
                    .unwrap_or(f64::NAN)
            );
        }
    }
    Ok(())
}

/// Integers print exactly (as a JSON number when they fit in i64/u64, else a string).
fn total_weight_json(total: &gpumst::TotalWeight) -> serde_json::Value {
    match *total {
        gpumst::TotalWeight::Float(x) => json!(x),
        gpumst::TotalWeight::Int(x) => {
            if let Ok(v) = i64::try_from(x) {
                json!(v)
            } else if let Ok(v) = u64::try_from(x) {
                json!(v)
            } else {
                json!(x.to_string())
            }
        }
    }
}

fn info(as_json: bool) -> ExitCode {
    let report = probe::report();
    let context = Context::new(&Options::default());
    let tiers = [&report.cuda, &report.opencl].map(|driver| {
        let tier: Tier = driver.tier.parse().expect("probe tiers are tier names");
        let skipped = context.as_ref().ok().and_then(|c| {
            c.skipped_tiers()
                .iter()
                .find(|(t, _)| *t == tier)
                .map(|(_, why)| why.clone())
        });
        (driver, skipped)
    });
    if as_json {
        let selected = match &context {
            Ok(c) => {
                json!({"tier": c.tier().name(), "device": c.device_name(), "memory_bytes": c.device_memory()})
            }
            Err(e) => json!({"error": e.to_string()}),
        };
        let object = json!({
            "version": gpumst::VERSION,
            "selected": selected,
            "probe": report,
            "skipped": tiers.iter().filter_map(|(d, why)| why.as_ref().map(|w| json!({"tier": d.tier, "reason": w}))).collect::<Vec<_>>(),
        });
        println!(
            "{}",
            serde_json::to_string_pretty(&object).expect("JSON of plain data")
        );
    } else {
        println!("gpumst {}", gpumst::VERSION);
        for (driver, skipped) in &tiers {
            let (state, why) = match skipped {
                Some(why) => ("not used", why.clone()),
                None => ("found", driver.summary()),
            };
            println!("{:<7} {state}: {why}", format!("{}:", driver.tier));
            for platform in &driver.platforms {
                println!("          platform {platform}");
            }
            for device in &driver.devices {
                println!(
                    "          {} [{}] {}{:.1} GiB: {}",
                    device.name,
                    device.kind,
                    device
                        .platform
                        .as_deref()
                        .map(|p| format!("on {p}, "))
                        .unwrap_or_default(),
                    device.memory_bytes as f64 / (1u64 << 30) as f64,
                    if device.usable {
                        "usable"
                    } else {
                        "not usable"
                    }
                );
                for note in &device.notes {
                    println!("            {note}");
                }
            }
        }
        if let Ok(c) = &context {
            println!(
                "selected: {} tier, {}, {:.1} GiB",
                c.tier(),
                c.device_name(),
                c.device_memory() as f64 / (1u64 << 30) as f64
            );
        }
    }
    match context {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("gpumst: {e}");
            ExitCode::FAILURE
        }
    }
}
