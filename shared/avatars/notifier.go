package avatars

import "context"

// Notifier tells the cdn function that a user's profile image changed, so that it
// drops its cached copies and invalidates CloudFront: the internal call of
// POST /user/avatar/change/{id}. Package cdnnotify implements it.
type Notifier interface {
	AvatarChanged(ctx context.Context, userID int64) error
}
