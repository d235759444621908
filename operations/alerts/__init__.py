"""Alert delivery (issue 29): notifications to a JSON webhook, a Slack-compatible webhook and e-mail.

`channels.py` reads the `[alerts]` table (secrets from the environment),
`notification.py` renders one notification safely per channel, `delivery.py`
sends, retries and records.
"""

from operations.alerts.channels import AlertSettings, EmailChannel, WebhookChannel, read_alert_settings, redact
from operations.alerts.delivery import Attempt, Delivery, DeliveryReport, deliver, delivery_log_rows
from operations.alerts.notification import Notification

__all__ = [
    "AlertSettings",
    "Attempt",
    "Delivery",
    "DeliveryReport",
    "EmailChannel",
    "Notification",
    "WebhookChannel",
    "deliver",
    "delivery_log_rows",
    "read_alert_settings",
    "redact",
]
