"""``python -m posviz.ui.launch run app.py …``: ``streamlit run`` with the old ``pages/`` folder
mode off before the first visitor (:mod:`posviz.ui.compat`, 1.: otherwise a fresh server's first
link to a generated lab page gets a blocking "Page not found" dialog). Every start command uses it.
"""

import sys

from streamlit.web import cli

from posviz.ui.compat import leave_pages_directory_mode

if __name__ == "__main__":
    leave_pages_directory_mode()
    sys.argv[0] = "streamlit"
    cli.main()
