"""`python -m cdk_app` runs the hyperpod-kit command line."""

from cdk_app.cli.main import main

main()
