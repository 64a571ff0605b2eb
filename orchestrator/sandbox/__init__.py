"""One run's sandbox: the container, the host-side meter and experiment service, the watchdog, copy-out."""
