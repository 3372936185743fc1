//! The `gpumst` command: runs the library on graph files and reports what it finds.

use std::process::ExitCode;

use clap::{Parser, Subcommand};
use gpumst::{probe, Context, Options, Tier};
use serde_json::json;

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
}

fn main() -> ExitCode {
    match Cli::parse().command {
        Command::Info { json } => info(json),
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
            for device in &driver.devices {
                println!(
                    "          {} [{}] {}{:.1} GiB",
                    device.name,
                    device.kind,
                    device
                        .platform
                        .as_deref()
                        .map(|p| format!("on {p}, "))
                        .unwrap_or_default(),
                    device.memory_bytes as f64 / (1u64 << 30) as f64
                );
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
