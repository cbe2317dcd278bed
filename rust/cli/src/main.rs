fn main() {
    eprintln!("evtx-rs: not built yet");
    std::process::exit(1);
}
